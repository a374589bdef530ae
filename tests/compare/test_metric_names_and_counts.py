"""compare / check / report -m read metric names as run and evaluate -m do (comma lists, families named by a
level), and trec_eval's counts num_ret / num_rel rank no system (checkgate review)."""

from __future__ import annotations

import json

import pytest

from tests.compare.helpers import write_result


def _qrels_and_run(tmp_path):
    """Worked example: q1 judges a and c relevant, the run ranks a, b, c; q2 judges b, the run ranks x, b.
    AP (trec_eval's map): q1 (1/1 + 2/3) / 2 = 5/6, q2 (1/2) / 1 = 1/2, mean 2/3; P@1: q1 1, q2 0;
    num_ret: 3 and 2; num_rel_ret: 2 and 1; iprec_at_recall_0.50: q1 1 (a at rank 1 reaches recall 1/2),
    q2 1/2 (b at rank 2)."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 c 1\nq2 0 b 1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 1.0 r\nq2 Q0 x 1 2.0 r\nq2 Q0 b 2 1.0 r\n")
    return qrels, run


def _evaluated(harness_cli, tmp_path):
    qrels, run = _qrels_and_run(tmp_path)
    done = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", tmp_path / "m.json",
                       "-m", "AP,iprec_at_recall,num_ret,num_rel,num_rel_ret", "--k", "1,10")
    assert done.returncode == 0, done.stderr
    return tmp_path / "m.json"


# ------------------------------------------------------------------------------------------------ -m
def test_check_takes_a_comma_list_and_a_family_named_by_a_level(harness_cli, tmp_path):
    """check -m NDCG@10,Recall@10 was 'metric NDCG@10,Recall@10 is not in this result' and -m iprec_at_recall
    'metric iprec_at_recall is not in this result', where harness evaluate -m takes both: the comma list is
    two metrics, the family its 11 levels (trec_eval's iprec_at_recall_0.00 ... 1.00)."""
    m = _evaluated(harness_cli, tmp_path)
    done = harness_cli("check", "--baseline", m, "--current", m, "-m", "ndcg@10, recall@10",
                       "-m", "iprec_at_recall", "--json", tmp_path / "check.json")
    assert done.returncode == 0, done.stderr
    checks = json.loads((tmp_path / "check.json").read_text())["checks"]
    levels = [f"iprec_at_recall_{p / 10:.2f}" for p in range(11)]
    assert [c["metric"] for c in checks] == ["NDCG@10", "Recall@10", *levels]
    by_name = {c["metric"]: c["baseline"] for c in checks}
    assert by_name["iprec_at_recall_0.50"] == pytest.approx((1 + 0.5) / 2)  # worked example above


def test_compare_and_report_take_a_comma_list(harness_cli, tmp_path):
    """compare -m AP,P@1 and report -m AP,P@1 were refused as one unknown name."""
    m = _evaluated(harness_cli, tmp_path)
    done = harness_cli("compare", m, f"b={m}", "-m", "map,P_1")  # map alone: trec_eval's AP; P_1: P@1
    assert done.returncode == 0, done.stderr
    assert "| system | AP | P@1 |" in done.stdout
    assert "| b | **0.6667** | **0.5000** |" in done.stdout  # AP 2/3, P@1 1/2 (worked example)
    done = harness_cli("report", m, f"b={m}", "-m", "AP,P@1", "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr


def test_a_missing_name_of_a_comma_list_is_named_as_given(harness_cli, tmp_path):
    m = _evaluated(harness_cli, tmp_path)
    done = harness_cli("check", "--baseline", m, "--current", m, "-m", "AP,recip_rank")
    assert done.returncode == 2
    assert "metric RR (given as recip_rank) is not in this result" in done.stderr
    done = harness_cli("report", m, f"b={m}", "-m", "AP,mrr", "-o", tmp_path / "r.html")
    assert done.returncode == 2
    assert "metric RR (given as mrr) is not in this result" in done.stderr


def test_compare_evaluates_a_run_file_on_the_metric_named(harness_cli, tmp_path):
    """compare RUN RUN --qrels Q -m map evaluated MAP@1 ... MAP@1000 (map as a family, at every default
    cutoff) and then looked for AP (map as one name alone): 'metric AP (given as map) is not in this
    result (it has MAP@1, ...)'. The run file is evaluated on AP: 2/3 (worked example above)."""
    qrels, run = _qrels_and_run(tmp_path)
    done = harness_cli("compare", run, f"b={run}", "--qrels", qrels, "-m", "map", "--json", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    systems = json.loads((tmp_path / "c.json").read_text())["systems"]
    assert [s["means"] for s in systems] == [{"AP": pytest.approx(2 / 3)}] * 2
    done = harness_cli("compare", run, f"b={run}", "--qrels", qrels, "-m", "iprec_at_recall",
                       "--json", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "c.json").read_text())["systems"][0]["means"]["iprec_at_recall_0.50"] == \
        pytest.approx(0.75)


# ------------------------------------------------------------------------------------------------ counts
def test_check_refuses_to_gate_a_count(harness_cli, tmp_path):
    """num_ret 980 -> 100 (a run cut to depth 100) read as REGRESSED (exit 1), and a tolerance of 0.005
    documents: num_ret and num_rel are no quality measures. Refused with one line, exit 2."""
    q = [f"q{i}" for i in range(30)]
    base = write_result(tmp_path / "base", {qid: {"num_ret": 980.0, "num_rel": 2.0} for qid in q})
    cur = write_result(tmp_path / "cur", {qid: {"num_ret": 100.0, "num_rel": 2.0} for qid in q})
    for metric in ("num_ret", "NumRel"):
        done = harness_cli("check", "--baseline", base, "--current", cur, "-m", metric)
        assert done.returncode == 2, done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "is not a quality measure and is not gated" in lines[0], done.stderr
        assert "REGRESSED" not in done.stdout


def test_check_gates_num_rel_ret_as_higher_is_better_in_documents(harness_cli, tmp_path):
    """num_rel_ret is a quality measure: 20 queries each losing one relevant document is -1.0 document per
    query, beyond the tolerance of 0.5 documents, with the exact randomization p = 2 / 2^20."""
    q = [f"q{i}" for i in range(20)]
    base = write_result(tmp_path / "base", {qid: {"num_rel_ret": 3.0} for qid in q})
    cur = write_result(tmp_path / "cur", {qid: {"num_rel_ret": 2.0} for qid in q})
    done = harness_cli("check", "--baseline", base, "--current", cur, "-m", "num_rel_ret", "--tolerance", "0.5",
                       "--json", tmp_path / "c.json")
    assert done.returncode == 1
    (check,) = json.loads((tmp_path / "c.json").read_text())["checks"]
    assert check["verdict"] == "REGRESSED" and check["delta"] == -1.0
    done = harness_cli("check", "--baseline", base, "--current", cur, "-m", "num_rel_ret", "--tolerance", "1")
    assert done.returncode == 0  # a change of exactly the tolerance is OK


def test_compare_marks_no_best_and_tests_nothing_on_a_count(harness_cli, tmp_path):
    """compare showed num_ret 980 in bold (best) and 100 with ▼ (significantly worse), with a details row
    and a Holm-adjusted p: a count is shown as its means only."""
    q = [f"q{i}" for i in range(30)]
    write_result(tmp_path / "base", {qid: {"num_ret": 980.0, "P@10": 0.5} for qid in q})
    write_result(tmp_path / "cur", {qid: {"num_ret": 100.0, "P@10": 0.5 if i % 2 else 0.4}
                                    for i, qid in enumerate(q)})
    done = harness_cli("compare", tmp_path / "base", tmp_path / "cur", "-m", "num_ret,P@10",
                       "--json", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    assert "| base (baseline) | 980.0000 | **0.5000** |" in done.stdout
    assert "| cur | 100.0000 | 0.4500 ▼ |" in done.stdout
    assert "| cur | num_ret |" not in done.stdout
    document = json.loads((tmp_path / "c.json").read_text())
    assert [c["metric"] for c in document["comparisons"]] == ["P@10"]
    assert list(document["counts"]) == ["num_ret"]


def test_report_marks_no_best_on_a_count(tmp_path):
    """harness report's leaderboard marked num_ret 980 best, drew significance groups and a row against the
    baseline for it."""
    from harness.compare import Settings, load_system
    from harness.reports.html.model import build_report

    q = [f"q{i}" for i in range(30)]
    base = load_system(str(write_result(tmp_path / "base", {qid: {"num_ret": 980.0, "P@10": 0.5} for qid in q})))
    cur = load_system(str(write_result(tmp_path / "cur", {qid: {"num_ret": 100.0, "P@10": 0.4} for qid in q})))
    report = build_report({"toy": [base, cur]}, ["num_ret", "P@10"], settings=Settings(permutations=100,
                                                                                        resamples=100))
    (section,) = report.datasets
    assert [v["best"] for v in section.cells["num_ret"].values()] == [False, False]
    assert all("groups" not in v for v in section.cells["num_ret"].values())
    assert [v["metric"] for v in section.versus] == ["P@10"]
    assert [v["best"] for v in report.average["num_ret"].values()] == [False, False]
    assert [v["best"] for v in section.cells["P@10"].values()] == [True, False]


def test_bench_leaderboard_marks_no_best_on_a_count():
    from harness.bench.leaderboard import metric_table

    board = {"retrievers": ["a", "b"], "tables": {
        "num_ret": {"rows": {"scifact": {"a": 980.0, "b": 100.0}}, "average": {"a": 980.0, "b": 100.0}},
        "P@10": {"rows": {"scifact": {"a": 0.5, "b": 0.4}}, "average": {"a": 0.5, "b": 0.4}}}}
    assert "**" not in "\n".join(metric_table(board, "num_ret")).replace("**average**", "")
    assert "| scifact | **0.5000** | 0.4000 |" in metric_table(board, "P@10")


@pytest.mark.parametrize("command", ["check", "evaluate"])
@pytest.mark.parametrize("given", ["", " , "])
def test_a_metric_option_with_no_name_is_refused_by_every_command(harness_cli, tmp_path, command, given):
    """-m "" (an empty -m "$METRICS" in a CI script): run and evaluate computed BEIR's six without a word;
    with comma lists read by check as by evaluate, check would have gated its default NDCG@10. One line,
    exit 2, for every command that reads -m."""
    m = _evaluated(harness_cli, tmp_path)
    qrels, run = _qrels_and_run(tmp_path)
    args = (["--baseline", m, "--current", m] if command == "check" else
            ["--qrels", qrels, "--run", run, "--json", tmp_path / "e.json"])
    done = harness_cli(command, *args, "-m", given)
    assert done.returncode == 2
    assert done.stderr == f"error: --metric: {given!r} names no metric (e.g. -m NDCG@10,Recall@100)\n"
