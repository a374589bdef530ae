"""``SystemResult.top_docs`` (what ``harness check`` lists as left / entered top k) is the ranking the
values were computed on: the evaluator's order and filtering under the result's recorded settings.

Under trec_eval-9 (the default) scores equal in float32 tie and ties go by document id descending, so
``a 1.00000001`` and ``b 1.0`` rank b first; a retrieved id equal to the query id is dropped unless the
result kept them (``ignore_identical_ids: false``). Each expectation is cross-checked against the
evaluator itself (P@1 of a run whose only relevant document is the expected first one).
"""

from __future__ import annotations

import json

from harness.compare import align, run_check
from harness.compare.load import load_system, read_run_file
from harness.evaluation import Evaluator
from harness.formats.trec import read_run
from harness.qrels import Qrels
from tests.compare.helpers import write_result

TIE = "q1 Q0 a 1 1.00000001 x\nq1 Q0 b 2 1.0 x\n"  # equal in float32: b first on id descending
IDENTICAL = "q1 Q0 q1 1 5.0 x\nq1 Q0 d 2 1.0 x\n"  # the query retrieves itself first


def _result(folder, run_text, settings):
    write_result(folder, {"q1": {"P@1": 1.0}, "q2": {"P@1": 0.0}}, settings=settings)
    (folder / "run.trec").write_text(run_text)
    return load_system(str(folder))


def _first_by_evaluator(run_path, candidates, **options):
    """The document the evaluator ranks first: the one of ``candidates`` whose P@1 is 1 when only it is relevant."""
    run = read_run(run_path)
    firsts = [d for d in candidates
              if Evaluator(["P@1"], **options).evaluate(run, Qrels.from_dict({"q1": {d: 1}})).means["P@1"] == 1.0]
    assert len(firsts) == 1
    return firsts[0]


def test_float32_ties_rank_by_id_descending_under_trec_eval_9(tmp_path):
    s = _result(tmp_path / "r", TIE, {"ignore_identical_ids": True, "semantics": "trec_eval-9"})
    assert s.top_docs("q1", 1) == ["b"]  # was ['a']: the float64 order
    assert s.top_docs("q1", 2) == ["b", "a"]  # the listing is in the evaluator's order too
    assert _first_by_evaluator(s.run_path, ["a", "b"], semantics="trec_eval-9") == "b"


def test_trec_eval_10_and_results_without_recorded_semantics_keep_the_float64_order(tmp_path):
    s = _result(tmp_path / "ten", TIE, {"ignore_identical_ids": True, "semantics": "trec_eval-10"})
    assert s.top_docs("q1", 1) == ["a"]
    assert _first_by_evaluator(s.run_path, ["a", "b"], semantics="trec_eval-10") == "a"
    # A metrics.json written before semantics were recorded was computed in the float64 order.
    assert _result(tmp_path / "old", TIE, {"ignore_identical_ids": True}).top_docs("q1", 1) == ["a"]


def test_a_document_whose_id_is_the_query_id_is_not_listed_unless_the_result_kept_them(tmp_path):
    default = _result(tmp_path / "drop", IDENTICAL, {"semantics": "trec_eval-9"})  # not recorded: dropped
    assert default.top_docs("q1", 1) == ["d"]
    assert _first_by_evaluator(default.run_path, ["q1", "d"]) == "d"
    kept = _result(tmp_path / "keep", IDENTICAL, {"ignore_identical_ids": False, "semantics": "trec_eval-9"})
    assert kept.top_docs("q1", 1) == ["q1"]
    assert _first_by_evaluator(kept.run_path, ["q1", "d"], ignore_identical_ids=False) == "q1"


def test_a_run_file_evaluated_here_is_listed_in_its_evaluator_order(tmp_path):
    (tmp_path / "run.trec").write_text(TIE + IDENTICAL.replace("d ", "c "))
    (tmp_path / "qrels.tsv").write_text("q1\t0\tc\t1\n")  # c: first once q1 is dropped
    s = read_run_file(tmp_path / "run.trec", tmp_path / "qrels.tsv", ["P@1"])
    assert s.values["P@1"].tolist() == [1.0] and s.top_docs("q1", 3) == ["c", "b", "a"]
    kept = read_run_file(tmp_path / "run.trec", tmp_path / "qrels.tsv", ["P@1"], ignore_identical_ids=False)
    assert kept.values["P@1"].tolist() == [0.0] and kept.top_docs("q1", 2) == ["q1", "c"]


def test_check_lists_left_and_entered_in_the_evaluator_order(tmp_path):
    settings = {"ignore_identical_ids": True, "semantics": "trec_eval-9"}
    base = _result(tmp_path / "base", TIE + "q1 Q0 q1 3 9.0 x\n", settings)
    cur = _result(tmp_path / "cur", "q1 Q0 c 1 1.0 x\nq1 Q0 a 2 0.5 x\n", settings)
    cur.values["P@1"][:] = [0.0, 0.0]  # q1 lost: its top 1 is listed
    result = run_check(align([base, cur], ["P@1"]), permutations=10, show=1)
    change = result.checks[0].worst[0]
    # Baseline top 1 is b (float32 tie, id descending), never q1 (its own id) nor a (the float64 first).
    assert (change.query_id, change.left, change.entered) == ("q1", ["b"], ["c"])
    assert json.loads(json.dumps(result.to_dict(), allow_nan=False))["checks"][0]["worst_queries"][0]["left_top_k"] == ["b"]


def test_check_means_of_values_near_2_to_the_1023_are_finite(tmp_path):
    # DCG_exp@1 of 2^1023 on two queries: numpy's mean overflowed to inf, delta was inf - inf = NaN, and
    # the check JSON held Infinity / NaN. The means are 2^1023 and 2^1022, the delta -2^1022 (REGRESSED
    # needs p < alpha: with 2 queries p = 1, so NOISE).
    big = 2.0**1023
    base = load_system(str(write_result(tmp_path / "b", {"q1": {"DCG_exp@1": big}, "q2": {"DCG_exp@1": big}})))
    cur = load_system(str(write_result(tmp_path / "c", {"q1": {"DCG_exp@1": big}, "q2": {"DCG_exp@1": 0.0}})))
    check = run_check(align([base, cur], ["DCG_exp@1"]), permutations=10, show=0).checks[0]
    assert (check.baseline_mean, check.current_mean, check.delta, check.verdict) == (big, big / 2, -big / 2, "NOISE")
    json.dumps(check.to_dict(), allow_nan=False)
