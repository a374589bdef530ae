"""Reproducibility review: a dense result says how many threads its float32 BLAS products ran on.

docs/ray.md measured it (SciFact, MiniLM, cached embeddings, 2 cores): the same embeddings searched
under OMP_NUM_THREADS=1 and with every core gave 18,083 of 300,000 run.trec lines with another score
in the last float32 bit and 12 with another document at a rank. Before, metrics.json held nothing
that told two such results apart (``efficiency.fingerprint`` records ``cpu.cores``, not the thread
settings nor the CPUs the process may use), so a reader could not explain the difference."""

from __future__ import annotations

import os

from retrievers.dense.exact import blas_threads
from tests.retrievers.test_dense_retriever import make, model_dir  # noqa: F401 (fixture)


def test_dense_stats_record_the_blas_thread_settings(model_dir, tmp_path, monkeypatch):  # noqa: F811
    # Expected: the environment variables as set here (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS unset,
    # MKL_NUM_THREADS=3) and the process's CPUs as os.sched_getaffinity counts them.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    expected = {"cpus": cpus, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": None, "MKL_NUM_THREADS": "3"}
    assert make(model_dir, tmp_path).stats()["blas_threads"] == expected
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert blas_threads()["OMP_NUM_THREADS"] == "2"
