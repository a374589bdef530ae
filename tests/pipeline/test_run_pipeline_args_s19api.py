"""run_pipeline (the Python API of `harness run --pipeline`) checks ``k_values`` and ``depth`` before any stage
runs, as run_experiment does (tests/test_experiment_api_review.py), with the same ValueError naming the value.
Before: ``depth=0`` was taken as "the default depth" (``depth or default``: searched 10 deep here without a
word), ``k_values=[0]`` ran every stage and was recorded in metrics.json as it was."""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.qrels import Qrels


def tiny():
    ids = [f"d{i}" for i in range(1, 13)]
    texts = ["apple pie"] + [f"apple {i}" for i in range(2, 13)]
    return Dataset("toy", "test", Corpus(ids, [""] * 12, texts), Queries(["q1"], ["apple pie"]),
                   Qrels.from_rows([("q1", "d1", 1.0)]))


def pipeline(tmp_path):
    return parse_pipeline({"name": "one", "stages": [{"name": "bm25", "type": "retrieve", "retriever": "bm25"}]},
                          "p.toml", base=tmp_path)


@pytest.mark.parametrize("k_values, depth, message", [
    ([10], 0, "depth must be an integer >= 1 .*got 0$"),
    ([10], 2.5, "depth must be an integer >= 1 .*got 2.5$"),
    ([10], "10", "depth must be an integer >= 1 .*got '10'$"),
    ([0], None, r"k values must be integers >= 1, got \[0\]"),
    ([True], None, r"k values must be integers >= 1, got \[True\]"),
])
def test_bad_cutoffs_or_depth_are_refused_before_any_stage_runs(tmp_path, monkeypatch, k_values, depth, message):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=message):
        run_pipeline(tiny(), pipeline(tmp_path), Evaluator(["P@1"], k_values=[10]), k_values, depth=depth,
                     cache=StageCache(tmp_path / "stages"))
    assert not (tmp_path / "stages").exists() or not any((tmp_path / "stages").iterdir())


def test_numpy_cutoffs_and_depth_run_as_ints(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    experiment, outcomes = run_pipeline(tiny(), pipeline(tmp_path), Evaluator(["P@10"]),
                                        np.array([10]), depth=np.int64(3), output_dir=tmp_path / "out",
                                        cache=StageCache(tmp_path / "stages"))
    assert len(outcomes[0].run) == 3 and experiment.document.settings["depth"] == 3
    # d1 ("apple pie"), the one relevant document, first of 3: P@10 = 1 / 10
    assert experiment.document.k_values == [10] and experiment.result.means == {"P@10": 0.1}


def test_cutoffs_the_evaluator_does_not_compute_are_refused_before_any_stage_runs(tmp_path, monkeypatch):
    # metrics.json recorded k_values [10] beside P@1 alone (its tables and a recompute's --k read k_values)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=r"^k values \[10\]: the evaluator computes no metric at 10 \(its cutoffs: "
                                         r"1\); give it the same cutoffs, Evaluator\(k_values=\[10\]\), and a search depth "
                                         r"as depth=$"):
        run_pipeline(tiny(), pipeline(tmp_path), Evaluator(["P@1"], k_values=[10]), [10],
                     cache=StageCache(tmp_path / "stages"))
    assert not (tmp_path / "stages").exists()
