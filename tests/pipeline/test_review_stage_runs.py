"""A stage's run is its run file's content (and a failing stage is one line), whether it was computed now or loaded from the cache.

A retrieve stage that returns nothing for a query (a run file that lacks it, or whose only hit is
the query's own id, dropped) held that query as an empty entry in memory; its run file (the cache
entry, or ``harness run``'s run.trec) cannot hold it. A fuse stage takes its queries in first-seen
order, so the fused run's query order, and the bytes of run.trec, depended on whether the inputs
were computed now (q1, q2) or loaded from the cache (q2, q1), and the first differed from the manual
chain ``harness run`` x2 -> ``harness fuse`` (q2, q1: q1 is not in a.trec). Expected order: the
manual chain's, worked out by hand below.
"""

from __future__ import annotations

import json

import pytest

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, StageError, parse_pipeline, run_pipeline
from tests.pipeline.fakes import write_three_docs, LengthReranker


def _dataset(tmp_path):
    ds = write_three_docs(tmp_path)
    # a.trec lacks q1; b.trec has q1 first: the manual chain's fused run is q2 (a's), then q1 (b's)
    (tmp_path / "a.trec").write_text("q2 Q0 d2 1 2.0 a\nq2 Q0 d3 2 1.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d1 1 3.0 b\nq2 Q0 d3 1 2.0 b\nq2 Q0 d2 2 1.0 b\n")
    return ds


def _pipeline(tmp_path, k):
    return parse_pipeline({"name": "p", "stages": [
        {"name": "a", "type": "retrieve", "retriever": "run-file", "params": {"path": str(tmp_path / "a.trec")}},
        {"name": "b", "type": "retrieve", "retriever": "run-file", "params": {"path": str(tmp_path / "b.trec")}},
        {"name": "f", "type": "fuse", "inputs": ["a", "b"], "method": "rrf", "k": k}]}, "p.toml")


def _queries(folder):
    lines = [line.split() for line in (folder / "run.trec").read_text().splitlines() if not line.startswith("#")]
    return list(dict.fromkeys(parts[0] for parts in lines))


def test_fused_query_order_does_not_depend_on_the_cache(tmp_path):
    ds = load_dataset(str(_dataset(tmp_path)), "test")
    cache, evaluator = StageCache(tmp_path / "cache"), Evaluator(["NDCG@10"])
    run_pipeline(ds, _pipeline(tmp_path, 60), evaluator, [10], output_dir=tmp_path / "fresh", cache=cache)
    # k changed: a and b are cache hits (read from their run files), f is computed from them
    _, outcomes = run_pipeline(ds, _pipeline(tmp_path, 10), evaluator, [10], output_dir=tmp_path / "hits",
                               cache=cache)
    assert [o.status for o in outcomes] == ["hit", "hit", "miss"]
    _, outcomes = run_pipeline(ds, _pipeline(tmp_path, 10), evaluator, [10], output_dir=tmp_path / "misses",
                               cache=StageCache(tmp_path / "cache2"))
    assert [o.status for o in outcomes] == ["miss", "miss", "miss"]
    assert _queries(tmp_path / "fresh") == _queries(tmp_path / "hits") == _queries(tmp_path / "misses") == ["q2", "q1"]
    assert (tmp_path / "hits" / "run.trec").read_bytes() == (tmp_path / "misses" / "run.trec").read_bytes()
    assert outcomes[0].run.query_ids.tolist() == ["q2"]  # as a.trec holds it


def test_query_emptied_by_its_identical_id_is_not_kept_empty(tmp_path):
    ds_folder = _dataset(tmp_path)
    (tmp_path / "a.trec").write_text("q1 Q0 q1 1 5.0 a\nq2 Q0 d2 1 2.0 a\n")  # q1's only hit is itself
    with open(ds_folder / "corpus.jsonl", "a") as handle:
        handle.write(json.dumps({"_id": "q1", "title": "", "text": "q1"}) + "\n")
    ds = load_dataset(str(ds_folder), "test")
    _, outcomes = run_pipeline(ds, _pipeline(tmp_path, 60), Evaluator(["NDCG@10"]), [10],
                               output_dir=tmp_path / "out", cache=StageCache(tmp_path / "cache"))
    assert outcomes[0].run.query_ids.tolist() == ["q2"]
    assert _queries(tmp_path / "out") == ["q2", "q1"]  # harness fuse on the two run.trec files gives this order


class MultiLineFailure(LengthReranker):
    """A reranker whose error spans lines, as a model library's often do."""

    def score(self, candidates, queries, corpus):
        raise RuntimeError("CUDA out of memory.\nTried to allocate 2.00 GiB\nSee the documentation")


def test_failing_stage_is_one_line(tmp_path):
    # docs/pipelines.md: "A stage that raises stops the pipeline with one line naming it"
    ds = load_dataset(str(_dataset(tmp_path)), "test")
    pipeline = parse_pipeline({"name": "p", "stages": [
        {"name": "a", "type": "retrieve", "retriever": "run-file", "params": {"path": str(tmp_path / "a.trec")}},
        {"name": "re", "type": "rerank", "input": "a",
         "reranker": "tests.pipeline.test_review_stage_runs:MultiLineFailure"}]}, "p.toml")
    with pytest.raises(StageError) as caught:
        run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], cache=StageCache(tmp_path / "cache"))
    assert str(caught.value) == ("pipeline stage 're' (rerank) failed: RuntimeError: CUDA out of memory. "
                                 "(finished stages cached: a)")


def test_the_rerank_cut_follows_the_evaluators_semantics():
    """Candidates.of always cut in trec_eval-9 order, so under trec_eval-10 a rerank stage (and
    `harness rerank --semantics trec_eval-10`) kept the document the evaluator ranks second. Run:
    d1 1.00000001, d2 1.0 (equal in float32). Expected at depth 1: d2 under trec_eval-9 (the tie goes
    to the larger id, as trec_eval 9 ranks it), d1 under trec_eval-10 (as doubles, trec_eval 10)."""
    from harness.datasets.corpus import Corpus, Queries
    from harness.reranker import Candidates
    from harness.run import Run

    run = Run.from_dict({"q1": {"d1": 1.00000001, "d2": 1.0}})
    queries, corpus = Queries(["q1"], ["x"]), Corpus(["d1", "d2"], ["", ""], ["a", "b"])
    for semantics, kept in (("trec_eval-9", "d2"), ("trec_eval-10", "d1"), (None, "d2")):
        top = Candidates.of(run, queries, corpus, 1, semantics=semantics)
        assert [corpus.ids[r] for r in top.doc_rows.tolist()] == [kept], semantics


def test_stages_s_is_the_time_this_run_spent(tmp_path):
    """metrics.json's timings.stages_s added every stage's stored compute times even when the stage was a
    cache hit, so a run that only loaded cached stages reported the first run's search time as its own
    (issue 15: every time in metrics.json is the time it really took). Expected: for hits, their
    cache_load_s and key_s (this run's time on the cache key) only; for computed stages, all their
    timings but evaluate_s."""
    ds = load_dataset(str(_dataset(tmp_path)), "test")
    cache, evaluator = StageCache(tmp_path / "cache"), Evaluator(["NDCG@10"])
    run_pipeline(ds, _pipeline(tmp_path, 60), evaluator, [10], output_dir=tmp_path / "first", cache=cache)
    _, outcomes = run_pipeline(ds, _pipeline(tmp_path, 10), evaluator, [10], output_dir=tmp_path / "second",
                               cache=cache)
    assert [o.status for o in outcomes] == ["hit", "hit", "miss"]
    hits_stored = sum(v for o in outcomes[:2] for k, v in o.timings.items()
                      if k not in ("evaluate_s", "cache_load_s", "key_s"))
    assert hits_stored > 0  # the stored compute times are still in the stage records
    expected = (sum(o.timings["cache_load_s"] + o.timings["key_s"] for o in outcomes[:2])
                + sum(v for k, v in outcomes[2].timings.items() if k != "evaluate_s"))
    stages_s = json.loads((tmp_path / "second" / "metrics.json").read_text())["timings"]["stages_s"]
    assert stages_s == pytest.approx(expected, abs=2e-6)  # (metrics.json rounds to microseconds)
