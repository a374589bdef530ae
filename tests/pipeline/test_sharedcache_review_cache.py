"""A pipeline whose stage cache cannot be written (a read-only or full cache disk) goes on with the
stage's run uncached (harness/pipeline/cache.py, StageCache.store), as the corpus and BM25 caches do.

Seen with ``HARNESS_CACHE_DIR`` on a read-only bind mount: ``harness run -d nfcorpus --pipeline p.toml``
(two BM25 stages and an RRF fuse) computed stage ``a`` (index and search), then failed with
``error: pipeline stage 'a' (retrieve) failed: OSError: [Errno 30] Read-only file system ...
(finished stages cached: none)``: the stage had not failed, its run was lost, and no result was
written, while the BM25 index cache beside it only warned. Expected: the same result as with a
writable cache (oracle: the run with a cache in tmp_path), a warning naming the cache folder, and no
entry left (a later run computes the stages again)."""

from __future__ import annotations

import errno
import logging
import os

import pytest

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.pipeline import cache as stage_cache
from tests.bench.bench_helpers import write_tiny

PIPELINE = {"name": "two", "stages": [
    {"name": "a", "type": "retrieve", "retriever": "bm25", "params": {"cache": False}},
    {"name": "b", "type": "retrieve", "retriever": "bm25", "params": {"cache": False, "k1": 1.2, "b": 0.5}},
    {"name": "rrf", "type": "fuse", "inputs": ["a", "b"], "method": "rrf"}]}


def _run(tmp_path, cache, out):
    pipeline = parse_pipeline(PIPELINE, "p.toml", base=tmp_path)
    dataset = load_dataset(str(tmp_path / "tiny"))
    return run_pipeline(dataset, pipeline, Evaluator(["P@1", "NDCG@10"]), [1, 10], depth=10, output_dir=out,
                        cache=cache)


def test_a_full_stage_cache_leaves_the_run_uncached_not_failed(tmp_path, monkeypatch, caplog):
    write_tiny(tmp_path / "tiny")
    expected, _ = _run(tmp_path, StageCache(tmp_path / "writable"), tmp_path / "expected")

    real = stage_cache.write_json

    def full(path, obj):  # the JSON, written after the run file: a disk that fills up between the two
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(stage_cache, "write_json", full)
    full_cache = StageCache(tmp_path / "full")
    with caplog.at_level(logging.WARNING):
        exp, outcomes = _run(tmp_path, full_cache, tmp_path / "out")
    # (recorded in metrics.json's stages[].cache: the warning is only logged, and -q hides it)
    assert [o.status for o in outcomes] == ["miss, not cached (No space left on device)"] * 3
    assert [s["cache"] for s in exp.document.stages] == [o.status for o in outcomes]
    assert exp.document.metrics == expected.document.metrics
    assert exp.run.to_dict() == expected.run.to_dict()
    assert f"could not write the pipeline stage cache under {tmp_path / 'full'}" in caplog.text
    assert all(full_cache.load(o.key) is None for o in outcomes)
    assert [p.name for p in (tmp_path / "full").rglob("*") if p.is_file()] == []  # no run file without its JSON
    monkeypatch.setattr(stage_cache, "write_json", real)
    _, again = _run(tmp_path, full_cache, tmp_path / "out2")
    assert [o.status for o in again] == ["miss", "miss", "miss"]  # (none was stored), now stored
    assert [o.status for o in _run(tmp_path, full_cache, tmp_path / "out3")[1]] == ["hit", "hit", "hit"]


def test_a_failing_stage_names_only_the_stages_actually_cached(tmp_path, monkeypatch):
    from harness.pipeline.run import StageError

    write_tiny(tmp_path / "tiny")
    monkeypatch.setattr(stage_cache, "write_json",
                        lambda path, obj: (_ for _ in ()).throw(OSError(errno.EROFS, os.strerror(errno.EROFS))))
    bad = {"name": "bad", "type": "rerank", "input": "b", "depth": 10,
           "reranker": "tests.pipeline.fakes:FailingReranker"}
    spec = {**PIPELINE, "stages": [*PIPELINE["stages"][:2], bad]}
    pipeline = parse_pipeline(spec, "p.toml", base=tmp_path)
    with pytest.raises(StageError) as info:
        run_pipeline(load_dataset(str(tmp_path / "tiny")), pipeline, Evaluator(["P@1"]), [1], depth=10,
                     cache=StageCache(tmp_path / "ro"))
    assert str(info.value) == ("pipeline stage 'bad' (rerank) failed: RuntimeError: model exploded "
                               "(finished stages cached: none)")  # (a and b ran, but neither was stored: was "a, b")
