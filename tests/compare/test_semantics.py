"""`compare` and `check` refuse results evaluated under different trec_eval semantics (issue 13)."""

from __future__ import annotations

import pytest

from harness.compare import align, load_system
from harness.errors import InputError
from tests.compare.helpers import values, write_result
from tests.compare.test_cli import harness  # noqa: F401  (the in-process CLI fixture)

SETTINGS = {"relevance_threshold": 1.0, "ignore_identical_ids": True, "depth": 10}


def _result(folder, semantics):
    settings = dict(SETTINGS, **({"semantics": semantics} if semantics else {}))
    return write_result(folder, values("NDCG@10", [0.1, 0.5, 0.7, 0.2]), settings=settings)


def test_align_refuses_mixed_semantics(tmp_path):
    a = load_system(str(_result(tmp_path / "a", "trec_eval-9")))
    b = load_system(str(_result(tmp_path / "b", "trec_eval-10")))
    with pytest.raises(InputError, match="b was evaluated under trec_eval-10 semantics but a under trec_eval-9"):
        align([a, b], ["NDCG@10"])


def test_same_or_unrecorded_semantics_align(tmp_path):
    a = load_system(str(_result(tmp_path / "a", "trec_eval-10")))
    b = load_system(str(_result(tmp_path / "b", "trec_eval-10")))
    old = load_system(str(_result(tmp_path / "old", None)))  # written before semantics were recorded
    assert len(align([a, b, old], ["NDCG@10"]).query_ids) == 4


@pytest.mark.parametrize("command", ["compare", "check"])
def test_cli_refuses_mixed_semantics_with_one_line_and_exit_2(tmp_path, harness, command):
    a, b = _result(tmp_path / "a", "trec_eval-9"), _result(tmp_path / "b", "trec_eval-10")
    out = tmp_path / "report.json"
    args = [a, b] if command == "compare" else ["--baseline", a, "--current", b]
    names = ("a", "b") if command == "compare" else ("baseline", "current")
    proc = harness(command, *args, "--json", out)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {b / 'metrics.json'}: {names[1]} was evaluated under trec_eval-10 semantics but "
                           f"{names[0]} under "
                           "trec_eval-9: values are not comparable (re-evaluate with --semantics trec_eval-9)\n")
    assert not out.exists()


def test_a_run_file_against_another_semantics_is_told_how_to_evaluate_it(tmp_path, harness):
    """compare has no --semantics: a run file it scores is evaluated under trec_eval-9, so the way out
    against a trec_eval-10 result is harness evaluate --semantics trec_eval-10 --json (the message said
    "re-evaluate with --semantics", an option compare does not have)."""
    ten = _result(tmp_path / "ten", "trec_eval-10")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    proc = harness("compare", ten, tmp_path / "r.trec", "--qrels", tmp_path / "q.txt")
    assert proc.returncode == 2
    assert proc.stderr.endswith("values are not comparable (a run file given here is evaluated under trec_eval-9: "
                                "evaluate it with harness evaluate --semantics trec_eval-10 --json and compare "
                                "that file)\n"), proc.stderr
