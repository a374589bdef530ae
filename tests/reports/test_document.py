"""The metrics.json document: one typed value, read back exactly as written, old files included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.datasets import load_dataset
from harness.errors import InputError
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.reports import SCHEMA, MetricsDocument
from tests.bench.bench_helpers import HangingRetriever, write_tiny

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "results" / "baselines" / "scifact" / "bm25" / "metrics.json"


def test_committed_baseline_round_trips_key_for_key():
    raw = json.loads(BASELINE.read_text())
    doc = MetricsDocument.read(BASELINE)
    assert doc.metrics["NDCG@10"] == raw["metrics"]["NDCG@10"] and doc.dataset["n_docs"] == 5183
    assert doc.extra == {} and doc.retriever_stats is None  # the baseline predates the optional blocks
    out = doc.to_json()
    assert out == raw and list(out) == list(raw)


def test_optional_blocks_and_unknown_keys_are_kept_in_order():
    raw = {"schema": SCHEMA, "per_query": {"q1": {"M": 0.5}, "q2": {"M": 1}}, "created": "x",
           "warnings": ["3 qrels rows name unknown documents"], "bench": {"fingerprint": "ab"},
           "stages": [{"name": "bm25"}], "efficiency": {"peak_rss_bytes": 12}, "energy": {"joules": 1.5}}
    doc = MetricsDocument.from_json(raw)
    assert doc.warnings == raw["warnings"] and doc.bench == {"fingerprint": "ab"} and doc.stages == [{"name": "bm25"}]
    assert doc.efficiency == {"peak_rss_bytes": 12}
    assert doc.extra == {"energy": {"joules": 1.5}}
    out = doc.to_json()
    # Every key written by the current version comes first, in its order; unknown keys follow as read.
    assert list(out)[:13] == ["schema", "dataset", "retriever", "k_values", "settings", "n_queries",
                              "n_missing_from_run", "n_without_relevant", "metrics", "per_query", "timings",
                              "versions", "created"]
    assert list(out)[13:] == ["warnings", "bench", "efficiency", "stages", "energy"]
    assert MetricsDocument.from_json(out) == doc


@pytest.mark.parametrize("obj, message", [
    ({"schema": SCHEMA, "dataset": ["scifact"]}, """'dataset' is \\["scifact"\\], expected an object"""),
    ({"schema": SCHEMA, "n_queries": "300"}, "'n_queries' is \"300\", expected an integer"),
    ({"schema": "retrieval-harness/compare/v1"}, "not a metrics file"),
    ({"schema": SCHEMA, "per_query": {"q1": [0.5]}}, r"per-query entry is not an object of metric values \(id 'q1'\)"),
])
def test_malformed_documents_are_input_errors(obj, message):
    with pytest.raises(InputError, match=message):
        MetricsDocument.from_json(obj, "m.json")


def test_run_experiment_records_the_time_load_dataset_took(tmp_path):
    dataset = load_dataset(str(write_tiny(tmp_path / "tiny")))
    assert dataset.load_s > 0  # measured by load_dataset, not the ~2e-06 of an already loaded dataset
    exp = run_experiment(dataset, HangingRetriever(), Evaluator(["P@1"], k_values=[1]), [1],
                         output_dir=tmp_path / "out")
    written = MetricsDocument.read(tmp_path / "out" / "metrics.json")
    assert list(written.timings) == ["load_s", "index_s", "search_s", "evaluate_s"]
    assert written.timings["load_s"] == round(dataset.load_s, 6) == exp.document.timings["load_s"]
    assert written == exp.document
