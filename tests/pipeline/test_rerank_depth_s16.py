"""A rerank stage given a depth larger than its input can hold is refused when the file is read.

Worked example: ``bm25`` keeps ``depth = 10`` documents per query, so a rerank of it with ``depth = 100``
scores those 10 only (``harness rerank --depth 100`` on a 10-document run does the same), while the
stage's record in metrics.json says ``depth = 100``: the file contradicts itself. Expected: one line
naming the file and ``stages[1].depth``, exit 2, before the dataset is loaded. A fuse stage holds at most
``min(its depth, the sum of its inputs')`` (40 + 30 = 70 here); a rerank's default depth (100) stays a
cap (docs/pipelines.md: a rerank keeps the smaller of its depth and its input's), as does a depth over a
retrieve stage that keeps the run's depth.
"""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.pipeline import parse_pipeline
from tests.cli.test_cli import harness

BM25 = {"name": "bm25", "type": "retrieve", "retriever": "bm25"}
DENSE = {"name": "dense", "type": "retrieve", "retriever": "dense", "depth": 30}
FUSE = {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"]}
CE = {"name": "ce", "type": "rerank", "input": "bm25", "reranker": "cross-encoder"}


def parse(*stages):
    return parse_pipeline({"stages": list(stages)}, "p.toml", check_components=False)


@pytest.mark.parametrize("stages,message", [
    (({**BM25, "depth": 10}, {**CE, "depth": 100}),
     "p.toml: stages[1].depth: 100 candidates per query, but its input 'bm25' holds at most 10; "
     "give that stage a larger depth, or this one 10 or less"),
    (({**BM25, "depth": 40}, DENSE, FUSE, {**CE, "input": "f", "depth": 71}),
     "p.toml: stages[3].depth: 71 candidates per query, but its input 'f' holds at most 70; "
     "give that stage a larger depth, or this one 70 or less"),
    (({**BM25, "depth": 50}, {**CE, "depth": 40}, {**CE, "name": "ce2", "input": "ce", "depth": 41}),
     "p.toml: stages[2].depth: 41 candidates per query, but its input 'ce' holds at most 40; "
     "give that stage a larger depth, or this one 40 or less"),
])
def test_rerank_deeper_than_its_input_is_refused(stages, message):
    with pytest.raises(ConfigError) as raised:
        parse(*stages)
    assert str(raised.value) == message


def test_depths_its_input_can_hold_are_accepted():
    assert parse({**BM25, "depth": 10}, {**CE, "depth": 10}).stages[1].depth == 10
    assert parse({**BM25, "depth": 10}, CE).stages[1].depth == 100  # the default: a cap
    assert parse(BM25, {**CE, "depth": 5000}).stages[1].depth == 5000  # bm25 keeps the run's depth
    assert parse({**BM25, "depth": 40}, DENSE, FUSE, {**CE, "input": "f", "depth": 70}).stages[3].depth == 70
    assert parse(BM25, DENSE, FUSE, {**CE, "input": "f", "depth": 1000}).stages[3].depth == 1000


def test_cli_one_line_before_the_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "p.toml"
    path.write_text('[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\ndepth = 10\n\n'
                    '[[stages]]\nname = "len"\ntype = "rerank"\ninput = "bm25"\n'
                    'reranker = "tests.pipeline.fakes:LengthReranker"\ndepth = 100\n')
    proc = harness("run", "--pipeline", str(path), "-d", "no-such-dataset", "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {path}:12: stages[1].depth: 100 candidates per query, but its input 'bm25' holds at most 10; "
        "give that stage a larger depth, or this one 10 or less"], proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


# ---------------------------------------------------------------- with the run's depth (--depth, --k, -m)
# bm25 keeps the run's depth: with --k 10 it is 10, and a rerank "of the top 100" scored 10 documents.
# Measured on SciFact (LengthReranker, --k 10): NDCG@10 0.3616 for the 10 reranked, 0.0433 for the 100
# the file asks for; metrics.json recorded depth 100 for both.
RUN_DEPTH = ('[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n\n'
             '[[stages]]\nname = "len"\ntype = "rerank"\ninput = "bm25"\n'
             'reranker = "tests.pipeline.fakes:LengthReranker"\n')


def test_cli_given_depth_over_the_runs_depth_is_refused_before_any_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "p.toml"
    path.write_text(RUN_DEPTH + "depth = 100\n")
    proc = harness("run", "--pipeline", str(path), "--k", "10", "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {path}:11: stages[1].depth: 100 candidates per query, but its input 'bm25' holds at most 10 with "
        "the run's depth 10 (--depth, else the largest cutoff of --k and -m); give --depth 100 or a depth to the "
        "stages before it, or this one a smaller depth"], proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_default_depth_over_the_runs_depth_is_a_cap_with_a_warning(tmp_path):
    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.pipeline import StageCache, run_pipeline

    given = parse(BM25, {"name": "len", "type": "rerank", "input": "bm25",
                         "reranker": "tests.pipeline.fakes:LengthReranker", "depth": 100})
    default = parse(BM25, {"name": "len", "type": "rerank", "input": "bm25",
                           "reranker": "tests.pipeline.fakes:LengthReranker"})
    dataset, cache = load_dataset("scifact"), StageCache(tmp_path / "stages")
    with pytest.raises(ConfigError, match=r"^p\.toml: stages\[1\]\.depth: 100 candidates per query, but its input "
                                          r"'bm25' holds at most 10 with the run's depth 10 "):
        run_pipeline(dataset, given, Evaluator(k_values=[10]), [10], cache=cache)
    assert not (tmp_path / "stages").exists()
    exp, outcomes = run_pipeline(dataset, default, Evaluator(k_values=[10]), [10], cache=cache)
    assert "stage 'len': reranks at most 10 candidates per query, not its default depth 100: its input 'bm25' " \
           "holds at most 10 with the run's depth 10" in exp.document.warnings
    assert max(outcomes[-1].run.offsets[1:] - outcomes[-1].run.offsets[:-1]) == 10
    exp, _ = run_pipeline(dataset, given, Evaluator(k_values=[10]), [10], depth=100, cache=cache)  # --depth 100
    assert not any("reranks at most" in w for w in exp.document.warnings or ())
