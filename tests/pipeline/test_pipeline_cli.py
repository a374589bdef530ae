"""``harness run --pipeline`` end to end on SciFact (bundled): stages, exact fusion, cache hits, stage errors.

Oracles: ``harness fuse`` on the two BM25 runs that ``harness run`` writes (the fuse stage must equal
it exactly), ``Reranker.rerank`` called directly on that fused run (the rerank stage), and the
evaluator on those runs (each stage's metrics). BM25's SciFact NDCG@10 0.678909 is docs/fusion.md's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.datasets import load_dataset
from harness.evaluation import evaluate
from harness.formats.trec import read_qrels, read_run
from harness.pipeline import StageCache
from tests.cli.test_cli import harness
from tests.pipeline.fakes import LengthReranker

STAGES = """
[[stages]]
name = "bm25"
type = "retrieve"
retriever = "bm25"

[[stages]]
name = "bm25b"
type = "retrieve"
retriever = "bm25"
params = { k1 = 1.2, b = 0.75 }

[[stages]]
name = "rrf"
type = "fuse"
inputs = ["bm25", "bm25b"]
method = "rrf"
k = 60

[[stages]]
name = "length"
type = "rerank"
input = "rrf"
reranker = "tests.pipeline.fakes:LengthReranker"
depth = 20
"""


def run_pipeline_cli(path, out, *extra):
    return harness("run", "--pipeline", str(path), "--k", "10,100", "-o", str(out), *extra)


def assert_same_run(a, b):
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.offsets, b.offsets)
    assert a.doc_vocab[a.doc_codes].tolist() == b.doc_vocab[b.doc_codes].tolist()
    assert np.array_equal(a.scores, b.scores)  # exact floats


@pytest.fixture(scope="module")
def piped(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline")
    cache = root / "cache"
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(cache))
    (root / "p.toml").write_text('name = "bm25x2-rrf-len"\n' + STAGES)
    first = run_pipeline_cli(root / "p.toml", root / "out")
    second = run_pipeline_cli(root / "p.toml", root / "out2")
    yield root, cache, first, second
    mp.undo()


def test_stages_recorded_and_final_run_is_last_stage(piped):
    root, cache, first, _ = piped
    assert first.returncode == 0, first.stderr
    folder = root / "out" / "scifact" / "bm25x2-rrf-len"
    doc = json.loads((folder / "metrics.json").read_text())
    stages = doc["stages"]
    assert [(s["name"], s["type"], s.get("inputs", []), s["cache"]) for s in stages] == [
        ("bm25", "retrieve", [], "miss"), ("bm25b", "retrieve", [], "miss"),
        ("rrf", "fuse", ["bm25", "bm25b"], "miss"), ("length", "rerank", ["rrf"], "miss")]
    assert stages[1]["params"] == {"k1": 1.2, "b": 0.75} and stages[1]["resolved_params"]["k1"] == 1.2
    assert {k: stages[2][k] for k in ("method", "norm", "k", "depth")} == {"method": "rrf", "norm": "none", "k": 60,
                                                                          "depth": 1000}
    assert stages[2]["fusion_used"] == {"method": "rrf", "norm": "none", "k": 60, "weights": None, "depth": 1000}
    assert set(stages[0]["timings"]) == {"index_s", "search_s", "key_s", "evaluate_s"}  # (key_s: its cache key's)
    assert set(stages[3]["timings"]) == {"rerank_s", "key_s", "evaluate_s"}
    assert round(stages[0]["metrics"]["NDCG@10"], 6) == 0.678909  # docs/fusion.md, BM25 on SciFact
    assert doc["metrics"] == stages[-1]["metrics"]
    assert "stage rrf (fuse): cache miss  NDCG@10" in first.stdout
    # the result's run.trec is the last stage: LengthReranker on the fused run, top 20 per query
    fused, _ = StageCache(cache / "pipelines").load(stages[2]["key"])
    ds = load_dataset("scifact")
    expected = LengthReranker().rerank(fused, ds.queries, ds.corpus, 20)
    assert_same_run(read_run(folder / "run.trec"), expected)
    assert max(np.diff(expected.offsets)) == 20


def test_fuse_stage_equals_harness_fuse(piped, tmp_path):
    root, cache, first, _ = piped
    stages = json.loads((root / "out" / "scifact" / "bm25x2-rrf-len" / "metrics.json").read_text())["stages"]
    for args in (["--name", "a"], ["--name", "b", "-p", "k1=1.2", "-p", "b=0.75"]):
        proc = harness("run", "--retriever", "bm25", "--k", "10,100", "-o", str(tmp_path), "-q", *args)
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / "fused.trec"
    proc = harness("fuse", "--method", "rrf", "--k", "60", "--run", str(tmp_path / "scifact/a/run.trec"),
                   "--run", str(tmp_path / "scifact/b/run.trec"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    fused_cli = read_run(out)
    fused_stage, _ = StageCache(cache / "pipelines").load(stages[2]["key"])
    assert_same_run(fused_stage, fused_cli)
    from harness.datasets import BUNDLED

    qrels = read_qrels(BUNDLED / "scifact" / "qrels" / "test.tsv")
    means = evaluate(fused_cli, qrels, k_values=[10, 100]).means
    assert stages[2]["metrics"]["NDCG@10"] == means["NDCG@10"]
    assert stages[2]["metrics"]["Recall@100"] == means["Recall@100"]


def test_rerun_hits_every_stage(piped):
    root, _, first, second = piped
    assert second.returncode == 0, second.stderr
    doc = json.loads((root / "out2" / "scifact" / "bm25x2-rrf-len" / "metrics.json").read_text())
    assert [s["cache"] for s in doc["stages"]] == ["hit"] * 4
    assert "cache_load_s" in doc["stages"][0]["timings"] and "index_s" in doc["stages"][0]["timings"]
    assert (root / "out2/scifact/bm25x2-rrf-len/run.trec").read_bytes() == \
        (root / "out/scifact/bm25x2-rrf-len/run.trec").read_bytes()
    before = json.loads((root / "out" / "scifact" / "bm25x2-rrf-len" / "metrics.json").read_text())
    assert doc["metrics"] == before["metrics"]


def test_failing_stage_keeps_finished_stages_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    head = '[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n\n[[stages]]\nname = "re"\n' \
           'type = "rerank"\ninput = "bm25"\ndepth = 10\nreranker = "tests.pipeline.fakes:'
    (tmp_path / "bad.toml").write_text(head + 'FailingReranker"\n')
    proc = run_pipeline_cli(tmp_path / "bad.toml", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: pipeline stage 're' (rerank) failed: RuntimeError: model exploded (finished stages cached: bm25)")
    assert not (tmp_path / "out").exists()  # nothing written for a failed pipeline
    (tmp_path / "good.toml").write_text(head + 'LengthReranker"\n')
    proc = run_pipeline_cli(tmp_path / "good.toml", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out" / "scifact" / "good" / "metrics.json").read_text())
    assert [(s["name"], s["cache"]) for s in doc["stages"]] == [("bm25", "hit"), ("re", "miss")]


@pytest.mark.parametrize("body,message", [
    ('[[stages]]\nname = "x"\ntype = "search"\n',
     '3: stages[0].type: unknown stage type "search" (expected one of: retrieve, fuse, rerank)'),
    ('[[stages]]\nname = "x"\ntype = "rerank"\ninput = "bm25"\nreranker = "bi-encoder"\n',
     '4: stages[0].input: unknown stage "bm25" (earlier stages: none); a stage\'s inputs must come before it'),
    ('[[stages]]\nname = "x"\ntype = "retrieve"\nretriever = "bm25"\nparams = { k3 = 1 }\n',
     '5: stages[0].params.k3: unknown parameter for retriever "bm25"'),
])
def test_bad_pipeline_file_is_one_line_and_writes_nothing(tmp_path, body, message):
    path = tmp_path / "p.toml"
    path.write_text(body)
    proc = run_pipeline_cli(path, tmp_path / "out")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:{message}"), proc.stderr  # <file>:<line>: <key>
    assert not (tmp_path / "out").exists()
