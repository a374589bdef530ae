"""run_pipeline in Python: an optimised fuse stage records the values it chose (== harness.fusion.optimize)."""

from __future__ import annotations

from harness.datasets import BUNDLED, load_dataset
from harness.evaluation import Evaluator
from harness.formats.trec import read_qrels
from harness.fusion import FusionSpec, optimize
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.reports import MetricsDocument


def _tuned(tmp_path, k_grid):
    """Two BM25 stages fused by rrf, k optimised over ``k_grid`` on a tuning split: the first 150 judged
    lines' queries of SciFact's test qrels, named "dev"."""
    lines = (BUNDLED / "scifact" / "qrels" / "test.tsv").read_text().splitlines()
    (tmp_path / "dev.tsv").write_text("\n".join(lines[:151]) + "\n")
    return parse_pipeline({"name": "tuned", "stages": [
        {"name": "bm25", "type": "retrieve", "retriever": "bm25"},
        {"name": "bm25b", "type": "retrieve", "retriever": "bm25", "params": {"k1": 1.2, "b": 0.75}},
        {"name": "rrf", "type": "fuse", "inputs": ["bm25", "bm25b"],
         "optimize": {"qrels": "dev.tsv", "k_grid": k_grid}}]}, "p.toml", base=tmp_path)


def test_optimized_fuse_stage_records_chosen_k(tmp_path):
    pipeline = _tuned(tmp_path, [1, 30, 200])
    ds = load_dataset("scifact")
    evaluator = Evaluator(["NDCG@10"])
    exp, outcomes = run_pipeline(ds, pipeline, evaluator, [10], depth=100, output_dir=tmp_path / "out",
                                 cache=StageCache(tmp_path / "cache"))
    expected = optimize([outcomes[0].run, outcomes[1].run], read_qrels(tmp_path / "dev.tsv"), FusionSpec.create("rrf"),
                        "NDCG@10", split="dev", k_values=[1, 30, 200])
    record = MetricsDocument.read(tmp_path / "out" / "metrics.json").stages[2]
    assert record["optimization"]["chosen"] == expected.chosen
    assert record["optimization"]["score"] == expected.score and record["optimization"]["split"] == "dev"
    assert [t["k"] for t in record["optimization"]["trials"]] == [1, 30, 200]
    assert record["fusion_used"] == expected.spec.to_dict()
    assert exp.document.metrics["NDCG@10"] == evaluator.evaluate(outcomes[2].run, ds.qrels).means["NDCG@10"]


def test_stages_block_round_trips_and_is_typed(tmp_path):
    import json

    import pytest

    from harness.errors import InputError

    doc = MetricsDocument(stages=[{"name": "bm25", "type": "retrieve", "cache": "hit", "metrics": {"NDCG@10": 0.5}}])
    again = MetricsDocument.from_json(json.loads(json.dumps(doc.to_json())))
    assert again.stages == doc.stages and "stages" not in MetricsDocument().to_json()
    with pytest.raises(InputError, match="'stages' is .* expected an array"):
        MetricsDocument.from_json({**doc.to_json(), "stages": {"bm25": 1}}, "m.json")


def test_an_optimised_fuse_stage_is_keyed_on_the_tie_rule(tmp_path, monkeypatch):
    # fuse --optimize chose among trials whose means differ only in their last bits by `score >= best`
    # (the qrels' query order chose), now by harness.fusion.optimize.TIE_RULE: a stage cached under
    # another rule is computed again, not read back (the retrieve stages still hit)
    import sys

    optimize_module = sys.modules["harness.fusion.optimize"]  # (harness.fusion.optimize is also the function)

    pipeline = _tuned(tmp_path, [1, 30])
    ds = load_dataset("scifact")

    def caches():
        _, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=100,
                                   cache=StageCache(tmp_path / "cache"))
        return [o.record()["cache"] for o in outcomes]
    assert caches() == ["miss", "miss", "miss"]
    assert caches() == ["hit", "hit", "hit"]
    monkeypatch.setattr(optimize_module, "TIE_RULE", "score >= best (exact)")
    assert caches() == ["hit", "hit", "miss"]


def test_an_optimised_fuse_stage_whose_trials_tie_warns(tmp_path):
    # harness fuse --optimize warns when trials tie at the best score; a pipeline's fuse stage recorded
    # `tied` only. Two identical BM25 stages: RRF of a run with itself orders as the run whatever k, so
    # both k tie (NDCG@10 the same for k 1 and 30) and the last, k = 30, is chosen.
    lines = (BUNDLED / "scifact" / "qrels" / "test.tsv").read_text().splitlines()
    (tmp_path / "dev.tsv").write_text("\n".join(lines[:151]) + "\n")
    pipeline = parse_pipeline({"name": "same", "stages": [
        {"name": "a", "type": "retrieve", "retriever": "bm25"},
        {"name": "b", "type": "retrieve", "retriever": "bm25"},
        {"name": "rrf", "type": "fuse", "inputs": ["a", "b"],
         "optimize": {"qrels": "dev.tsv", "k_grid": [1, 30]}}]}, "p.toml", base=tmp_path)
    exp, outcomes = run_pipeline(load_dataset("scifact"), pipeline, Evaluator(["NDCG@10"]), [10], depth=100,
                                 cache=StageCache(tmp_path / "cache"))
    optimization = outcomes[2].info["optimization"]
    assert optimization["tied"] == 2 and optimization["chosen"] == {"k": 30}
    assert optimization["trials"][0]["score"] == optimization["trials"][1]["score"]
    assert [w for w in exp.document.warnings if w.startswith("stage 'rrf'")] == [
        f"stage 'rrf': every one of the 2 trials scored NDCG@10 = {optimization['score']!r}: NDCG@10 does not "
        "tell them apart, and k=30 is the last of them in grid order (ranx's rule), not a better value"]
