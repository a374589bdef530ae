"""compare and check name two results whose numbers were computed under other versions of a library that
computed them: the ``*_versions`` blocks of ``retriever_stats`` (and of each stage's ``stats``) that a dense
run's embeddings, a BM25 index or a cross-encoder's scores record (harness.compare.provenance
.library_versions_warnings). Before, nothing said so: a baseline whose embeddings transformers 1.0 computed
and a current run of transformers 2.0 were gated with no word of the libraries (``consistency_warnings`` compares
dataset files and evaluation settings only, ``numbers_warnings`` the harness's NUMBERS_VERSION only).
Expected: one warning line naming the library and both versions; none for equal versions, for libraries one
side does not record, or for a result that records none (written before they were)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compare.helpers import values, write_result

NDCG = [0.2, 0.4, 0.6, 0.8, 0.5, 0.3]


def _result(folder: Path, stats: dict | None = None, stages: list | None = None) -> Path:
    write_result(folder, values("NDCG@10", NDCG))
    doc = json.loads((folder / "metrics.json").read_text())
    if stats is not None:
        doc["retriever_stats"] = stats
    if stages is not None:
        doc["stages"] = stages
    (folder / "metrics.json").write_text(json.dumps(doc))
    return folder


def _dense(transformers: str) -> dict:
    return {"documents_cache": "hit", "documents_versions": {"torch": ["2.0"], "transformers": [transformers]},
            "queries_versions": {"torch": ["2.0"], "transformers": [transformers]}}


def _lines(proc) -> list[str]:
    """The warning lines (compare prints them on stderr, and its markdown repeats them on stdout as
    ``> warning: ...``; check prints its report, warnings included, on stdout)."""
    return [line for line in (proc.stdout + proc.stderr).splitlines()
            if "library versions" in line and not line.startswith("> ")]


def test_check_names_the_library_and_both_versions_once(tmp_path, harness_cli):
    base = _result(tmp_path / "base", _dense("1.0"))
    cur = _result(tmp_path / "cur", _dense("2.0"))
    proc = harness_cli("check", "--baseline", base / "metrics.json", "--current", cur / "metrics.json",
                       "-m", "NDCG@10")
    assert proc.returncode == 0, proc.stderr
    assert _lines(proc) == ["warning: baseline and current were computed under different library versions "
                            "(transformers 1.0 vs 2.0; retriever_stats / stages[].stats *_versions): values may "
                            "differ by the libraries, not by the systems"]


def test_compare_of_a_pipeline_stage_and_same_versions(tmp_path, harness_cli):
    scored = [{"name": "ce", "stats": {"scores_versions": {"transformers": "1.0", "torch": "2.0"}}}]
    a = _result(tmp_path / "a", {}, scored)
    b = _result(tmp_path / "b", {}, [{"name": "ce", "stats": {"scores_versions": {"transformers": "2.0",
                                                                                   "torch": "2.0"}}}])
    same = _result(tmp_path / "same", {}, scored)
    args = ("-m", "NDCG@10", "--permutations", "10", "--resamples", "10")
    proc = harness_cli("compare", a, b, *args)
    assert proc.returncode == 0, proc.stderr
    assert len(_lines(proc)) == 1 and "a and b were computed under different library versions (transformers " \
                                      "1.0 vs 2.0;" in _lines(proc)[0]
    assert _lines(harness_cli("compare", a, same, *args)) == []


def test_results_that_record_none_or_other_libraries_are_not_compared(tmp_path, harness_cli):
    old = _result(tmp_path / "old")  # written before the versions were recorded
    dense = _result(tmp_path / "dense", _dense("2.0"))
    bm25 = _result(tmp_path / "bm25", {"index_versions": {"numpy": "2.0", "PyStemmer": "3.0"}})
    unknown = _result(tmp_path / "unknown", {"documents_versions": {"transformers": ["unknown"]}})
    args = ("-m", "NDCG@10", "--permutations", "10", "--resamples", "10")
    for pair in ((old, dense), (dense, bm25), (unknown, dense)):
        assert _lines(harness_cli("compare", *pair, *args)) == []
