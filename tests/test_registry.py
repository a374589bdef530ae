"""The core finds retrievers only through the registry: entry points (built-ins included) or module:Class."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.registry import registered, retriever_class
from harness.retriever import Retriever

REPO = Path(__file__).resolve().parents[1]


def test_core_sources_never_import_the_retrievers_package():
    pattern = re.compile(r"^\s*(from|import)\s+retrievers\b")
    offenders = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "harness").rglob("*.py"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.match(line)]
    assert offenders == []


def test_builtins_are_entry_points_like_any_plugin():
    # pyproject.toml [project.entry-points."retrieval_harness.retrievers"]
    assert {name: registered()[name] for name in ("bm25", "dense", "run-file")} == {
        "bm25": "retrievers.bm25:BM25Retriever", "dense": "retrievers.dense:DenseRetriever",
        "run-file": "retrievers.run_file:RunFileRetriever"}
    cls = retriever_class("run-file")
    assert cls.__name__ == "RunFileRetriever" and issubclass(cls, Retriever)
    with pytest.raises(HarnessError, match="unknown retriever 'nope'; available: bm25, dense, .*run-file.*, "
                                           "or module:Class"):
        retriever_class("nope")


def test_loading_the_core_loads_no_retriever():
    code = ("import sys, harness.cli.run, harness.cli.bench, harness.bench, harness.compare, harness.experiment; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'retrievers'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"
