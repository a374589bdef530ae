"""A value a stage's retriever or reranker constructor refuses is one line before any stage runs.

``harness run -r bm25 -p backend=nope`` and ``harness rerank -r cross-encoder`` (no model) refuse in
their constructors before reading anything; a pipeline created each component only when its stage
came up, so the same mistakes failed as ``pipeline stage 'ce' (rerank) failed: ...`` after every
earlier stage had run (a dense encoding of the corpus: minutes). Expected: exit 2, one line naming
the file, the stage's key and the constructor's own message, no stage run (the stage cache stays
empty) and nothing written.
"""

from __future__ import annotations

import pytest

from harness.datasets import load_dataset
from harness.errors import ConfigError
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from tests.cli.test_cli import harness

BM25 = '[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n\n'


def cached_entries(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.mark.parametrize("stage,message", [
    ('[[stages]]\nname = "ce"\ntype = "rerank"\ninput = "bm25"\nreranker = "cross-encoder"\n',
     "6: stages[1].params: reranker 'cross-encoder' of stage 'ce': the cross-encoder reranker needs "
     "model=NAME_OR_PATH (a hub name or a local folder)"),
    ('[[stages]]\nname = "b2"\ntype = "retrieve"\nretriever = "bm25"\nparams = { backend = "nope" }\n',
     "10: stages[1].params: retriever 'bm25' of stage 'b2': unknown BM25 backend 'nope'; choose one of lucene, "
     "rank-bm25"),
])
def test_cli_refuses_before_any_stage(tmp_path, monkeypatch, stage, message):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "p.toml"
    path.write_text(BM25 + stage)
    proc = harness("run", "--pipeline", str(path), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {path}:{message}"], proc.stderr  # (line 6: the stage
    # without params, line 10: its params)
    assert cached_entries(tmp_path / "cache" / "pipelines") == []  # bm25 did not run first
    assert not (tmp_path / "out").exists()


def test_run_pipeline_refuses_before_any_stage(tmp_path):
    pipeline = parse_pipeline({"stages": [
        {"name": "bm25", "type": "retrieve", "retriever": "bm25"},
        {"name": "missing", "type": "retrieve", "retriever": "run-file", "params": {"path": str(tmp_path / "no.trec")}},
        {"name": "rrf", "type": "fuse", "inputs": ["bm25", "missing"]},
    ]}, "p.toml", check_components=True)
    cache = StageCache(tmp_path / "stages")
    with pytest.raises(ConfigError) as raised:
        run_pipeline(load_dataset("scifact"), pipeline, Evaluator(k_values=[10]), [10], cache=cache)
    assert str(raised.value) == (f"p.toml: stages[1].params: retriever 'run-file' of stage 'missing': "
                                 f"run file not found: {tmp_path / 'no.trec'}")
    assert cached_entries(tmp_path / "stages") == []
