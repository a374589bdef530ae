"""What compare and check say about inputs evaluated differently (settings review, third pass on compare)."""

from __future__ import annotations

import json

import pytest

from harness.compare.load import align, load_system
from harness.errors import InputError


def _qrels_and_run(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq2 0 b 1\nq3 0 c 2\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 r\nq2 Q0 b 1 2.0 r\nq3 Q0 x 1 2.0 r\n")
    return qrels, run


def test_different_query_sets_from_different_thresholds_are_named_as_such(harness_cli, tmp_path):
    """The same run and qrels evaluated at thresholds 1 and 2: q2 (grade 1 only) is left out at 2, so the
    query sets differ. The refusal said 'evaluate both on the same qrels' (they were); it names the cause."""
    qrels, run = _qrels_and_run(tmp_path)
    for name, extra in (("one", []), ("two", ["--relevance-threshold", "2"])):
        assert harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", tmp_path / f"{name}.json",
                           "-m", "P@1", *extra).returncode == 0
    a, b = load_system(str(tmp_path / "one.json")), load_system(str(tmp_path / "two.json"))
    with pytest.raises(InputError) as info:
        align([a, b], ["P@1"])
    assert "different relevance thresholds (1.0 vs 2.0)" in str(info.value)
    assert "same qrels" not in str(info.value)


def test_a_run_file_evaluated_on_other_qrels_than_a_result_is_warned_about(tmp_path):
    """compare RESULT run.trec --qrels OTHER: the run file is scored on qrels whose sha256 is not among the
    result's dataset files; two metrics files made so were warned about, a run file evaluated here was not."""
    from harness.compare.load import consistency_warnings

    qrels, run = _qrels_and_run(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    from tests.compare.helpers import write_evaluated_result

    write_evaluated_result(tmp_path / "res", run, qrels)
    base = load_system(str(tmp_path / "res"))
    same = load_system(str(run), qrels=qrels, metrics=["P@1"])
    assert consistency_warnings([base, same]) == []
    moved = load_system(str(run), qrels=other, metrics=["P@1"])
    assert consistency_warnings([base, moved]) == [
        "run was evaluated on qrels that are not among the dataset files res was evaluated on (sha256 differ)"]


def test_check_finds_the_evaluated_run_beside_its_metrics_file_when_the_working_directory_has_another(
        harness_cli, tmp_path, monkeypatch):
    """harness evaluate --json records the run path as given (relative); run from another directory holding
    another run.trec, check took that one, failed its sha256 and showed no rankings; it takes the one whose
    sha256 is recorded (beside the metrics file)."""
    qrels, run = _qrels_and_run(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "run.trec").write_text(run.read_text())
    monkeypatch.chdir(work)
    assert harness_cli("evaluate", "--qrels", qrels, "--run", "run.trec", "--json", "m.json", "-m", "P@1").returncode == 0
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "run.trec").write_text("q1 Q0 zz 1 2.0 r\n")
    monkeypatch.chdir(other)
    system = load_system(str(work / "m.json"))
    assert system.run_path.resolve() == (work / "run.trec").resolve()
    assert system.top_docs("q1", 1) == ["a"]


def test_compare_and_check_take_the_metric_names_evaluate_takes(harness_cli, tmp_path):
    """-m ndcg_cut_10 / P_1 (trec_eval's names, which harness evaluate -m and report -m take) were refused
    by compare and check ('metric ndcg_cut_10 was not aligned'); a family name still is."""
    qrels, run = _qrels_and_run(tmp_path)
    assert harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", tmp_path / "m.json",
                       "-m", "P@1", "-m", "NDCG@10").returncode == 0
    done = harness_cli("check", "--baseline", tmp_path / "m.json", "--current", tmp_path / "m.json",
                       "-m", "ndcg_cut_10", "-m", "P_1", "--json", tmp_path / "check.json")
    assert done.returncode == 0, done.stderr
    assert [c["metric"] for c in json.loads((tmp_path / "check.json").read_text())["checks"]] == ["NDCG@10", "P@1"]
    done = harness_cli("compare", tmp_path / "m.json", f"b={tmp_path / 'm.json'}", "--metric", "P_1")
    assert done.returncode == 0, done.stderr
    assert "| b | P@1 |" in done.stdout
    assert harness_cli("check", "--baseline", tmp_path / "m.json", "--current", tmp_path / "m.json",
                       "-m", "NDCG").returncode == 2


def test_compare_and_check_read_one_name_as_trec_eval_does(harness_cli, tmp_path):
    """-m mrr / -m map on check and compare said "metric mrr is not in this result (it has ... RR ...)":
    in a metric list they are families (MRR@k, MAP@k at every k), which need cutoffs; one name alone is
    trec_eval's recip_rank (RR) and map (AP), as parse_metric reads it (final review)."""
    qrels, run = _qrels_and_run(tmp_path)
    assert harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", tmp_path / "m.json",
                       "-m", "RR,AP").returncode == 0
    done = harness_cli("check", "--baseline", tmp_path / "m.json", "--current", tmp_path / "m.json",
                       "-m", "mrr", "-m", "map", "-m", "recip_rank", "--json", tmp_path / "check.json")
    assert done.returncode == 0, done.stderr
    assert [c["metric"] for c in json.loads((tmp_path / "check.json").read_text())["checks"]] == ["RR", "AP"]
    done = harness_cli("compare", tmp_path / "m.json", f"b={tmp_path / 'm.json'}", "--metric", "mrr")
    assert done.returncode == 0, done.stderr
    assert "| b | RR |" in done.stdout
    done = harness_cli("check", "--baseline", tmp_path / "m.json", "--current", tmp_path / "m.json", "-m", "ndcg_exp")
    assert done.returncode == 2 and "(given as" not in done.stderr  # (a family: refused as before)
    (tmp_path / "r.json").write_text((tmp_path / "m.json").read_text().replace('"AP"', '"AQ"'))
    done = harness_cli("check", "--baseline", tmp_path / "r.json", "--current", tmp_path / "r.json", "-m", "map")
    assert done.returncode == 2 and "metric AP (given as map) is not in this result" in done.stderr
