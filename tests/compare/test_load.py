"""Reading and aligning results: values, names, and one-line errors for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.compare.load import align, load_system, read_metrics_json, split_name, unique_names
from harness.errors import InputError
from tests.compare.helpers import values, write_result


def test_reads_per_query_values_texts_and_names(tmp_path):
    folder = write_result(tmp_path / "bm25", {"q1": {"NDCG@10": 0.5, "P@1": 1.0}, "q2": {"NDCG@10": 0.25, "P@1": 0.0}},
                          texts={"q1": "first", "q2": "second"})
    s = load_system(str(folder))
    assert s.name == "bm25" and s.query_ids.tolist() == ["q1", "q2"]
    assert s.values["NDCG@10"].tolist() == [0.5, 0.25] and s.values["P@1"].tolist() == [1.0, 0.0]
    assert s.query_texts() == {"q1": "first", "q2": "second"}
    assert s.run() is None and s.top_docs("q1", 10) is None
    assert load_system(f"mine={folder / 'metrics.json'}").name == "mine"


def test_split_name():
    assert split_name("a=results/x") == ("a", "results/x")
    assert split_name("results/x") == (None, "results/x")


@pytest.mark.parametrize("content, message", [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"schema": "other/v1"}', "not a metrics file"),
    ('{"schema": "retrieval-harness/metrics/v1", "per_query": {}}', "no per-query values"),
    ('{"schema": "retrieval-harness/metrics/v1", "per_query": {"q1": {"NDCG@10": 0.5}, "q2": {}}}',
     r"per-query value of NDCG@10 is missing \(id 'q2'\)"),
    ('{"schema": "retrieval-harness/metrics/v1", "per_query": {"q1": {"NDCG@10": "high"}}}', "not a finite number"),
])
def test_bad_metrics_files_are_one_line_input_errors(tmp_path, content, message):
    path = tmp_path / "metrics.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        read_metrics_json(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_missing_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        load_system(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no metrics.json"):
        load_system(str(tmp_path / "empty"))
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.0 x\n")
    with pytest.raises(InputError, match="needs qrels"):
        load_system(str(tmp_path / "run.trec"))


def test_align_reorders_queries_of_the_second_system(tmp_path):
    a = load_system(str(write_result(tmp_path / "a", {"q1": {"M": 0.1}, "q2": {"M": 0.2}, "q3": {"M": 0.3}})))
    b = load_system(str(write_result(tmp_path / "b", {"q3": {"M": 0.9}, "q1": {"M": 0.7}, "q2": {"M": 0.8}})))
    aligned = align([a, b], ["M"])
    assert aligned.query_ids.tolist() == ["q1", "q2", "q3"]
    assert aligned.of("b", "M").tolist() == [0.7, 0.8, 0.9]
    assert aligned.warnings == []


def test_different_query_sets_are_an_error_unless_intersection(tmp_path):
    a = load_system(str(write_result(tmp_path / "a", values("M", [0.1, 0.2, 0.3, 0.4]))))
    b = load_system(str(write_result(tmp_path / "b", {"q1": {"M": 0.5}, "q2": {"M": 0.6}, "q3": {"M": 0.7},
                                                      "x9": {"M": 1.0}})))
    with pytest.raises(InputError, match=r"different query sets: 1 of a's queries are missing here \(first: 'q0'\); "
                                         r"1 queries are not in a \(first: 'x9'\)"):
        align([a, b], ["M"])
    aligned = align([a, b], ["M"], intersection=True)
    assert aligned.query_ids.tolist() == ["q1", "q2", "q3"]
    assert aligned.of("a", "M").tolist() == [0.2, 0.3, 0.4] and aligned.of("b", "M").tolist() == [0.5, 0.6, 0.7]
    assert aligned.warnings == ["comparing on the 3 queries common to all systems (2 of 5 queries dropped)"]


def test_missing_metric_and_setting_warnings(tmp_path):
    a = load_system(str(write_result(tmp_path / "a", values("M", [0.1, 0.2]))))
    b = load_system(str(write_result(tmp_path / "b", values("M", [0.1, 0.2]), files={"qrels/test.tsv": "zzz"},
                                     settings={"relevance_threshold": 2.0, "ignore_identical_ids": True, "depth": 10})))
    with pytest.raises(InputError, match="metric NDCG@10 is not in this result"):
        align([a, b], ["NDCG@10"])
    warnings = align([a, b], ["M"]).warnings
    assert warnings == ["b and a were evaluated on different dataset files (sha256 differ)",
                        "b and a differ in evaluation settings: relevance_threshold 1.0 vs 2.0"]


def test_unique_names(tmp_path):
    a = load_system(str(write_result(tmp_path / "x" / "bm25", values("M", [0.1, 0.2]))))
    b = load_system(str(write_result(tmp_path / "y" / "bm25", values("M", [0.1, 0.2]))))
    unique_names([a, b])
    assert (a.name, b.name) == ("x/bm25", "y/bm25")
    c = load_system(f"same={tmp_path / 'x' / 'bm25'}")
    d = load_system(f"same={tmp_path / 'y' / 'bm25'}")
    with pytest.raises(InputError, match="both named 'same'"):
        unique_names([c, d])


def test_evaluate_style_files_and_unknown_depth_do_not_warn(tmp_path):
    # harness evaluate records only the qrels hash and depth None; harness run records all files.
    run_like = load_system(str(write_result(tmp_path / "run", values("M", [0.1, 0.2]),
                                            files={"corpus.jsonl.gz": "c1", "qrels/test.tsv": "abc"})))
    evaluate_like = load_system(str(write_result(
        tmp_path / "evaluate", values("M", [0.1, 0.2]), files={"/data/qrels.tsv": "abc"},
        settings={"relevance_threshold": 1.0, "ignore_identical_ids": True, "depth": None})))
    assert align([run_like, evaluate_like], ["M"]).warnings == []


def test_find_qrels_only_when_unchanged(tmp_path):
    from harness.compare.load import find_qrels
    from harness.datasets.beir import sha256

    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q0\td1\t1\n")
    same = load_system(str(write_result(tmp_path / "a", values("M", [0.1, 0.2]), files={str(qrels): sha256(qrels)})))
    assert find_qrels(same) == qrels
    changed = load_system(str(write_result(tmp_path / "b", values("M", [0.1, 0.2]), files={str(qrels): "0" * 64})))
    assert find_qrels(changed) is None


def test_committed_baseline_finds_the_bundled_qrels_and_its_run():
    from harness.compare.load import find_qrels
    from harness.datasets import BUNDLED
    from tests.compare.test_cli import BASELINE

    if not (BASELINE / "metrics.json").is_file():
        pytest.skip("no committed baseline")
    s = load_system(str(BASELINE))
    assert find_qrels(s) == BUNDLED / "scifact" / "qrels" / "test.tsv"
    assert len(s.query_ids) == 300 and s.query_texts()["1"]
    assert len(s.top_docs("1", 10)) == 10
