"""`harness check` lists the queries that lost most with ties in the report explorer's natural id order (s18).

Worked example: 5 queries lose exactly 1.0 (baseline 1, current 0), one ("3") is unchanged. The old list, the
ties in the ids' text order, was 10, 2, PLAIN-10, PLAIN-100, PLAIN-9; in natural order (where both ids have a
run of digits, the runs compared as numbers,
as the explorer's 'query id' sort, tests/reports/test_report_leftovers_s18.py) it is 2, 10, PLAIN-9, PLAIN-10,
PLAIN-100; and with show=2 the two shown are 2 and 10 (were 10 and 2).
"""

from __future__ import annotations

from harness.compare import align
from harness.compare.check import format_report, run_check
from harness.compare.load import load_system
from tests.compare.helpers import write_result

LOST = ["10", "2", "PLAIN-10", "PLAIN-100", "PLAIN-9"]


def _check(tmp_path, show):
    base = {q: {"NDCG@10": 1.0} for q in [*LOST, "3"]}
    cur = {q: {"NDCG@10": 1.0 if q == "3" else 0.0} for q in base}
    a = load_system(str(write_result(tmp_path / "baseline", base)))
    b = load_system(str(write_result(tmp_path / "current", cur)))
    return run_check(align([a, b], ["NDCG@10"]), tolerance=0.0, test="t", show=show)


def test_tied_losses_are_listed_in_natural_id_order(tmp_path):
    (check,) = _check(tmp_path, 5).checks
    assert [q.query_id for q in check.worst] == ["2", "10", "PLAIN-9", "PLAIN-10", "PLAIN-100"]
    (check,) = _check(tmp_path, 2).checks
    assert [q.query_id for q in check.worst] == ["2", "10"]
    text = format_report(_check(tmp_path, 5), "baseline", "current")
    assert [line.strip() for line in text.splitlines() if line.startswith("  ") and not line.startswith("    ")
            and line.strip() in LOST] == ["2", "10", "PLAIN-9", "PLAIN-10", "PLAIN-100"]


def test_natural_ranks_worked_example():
    """The explorer's order (tests/reports/test_report_leftovers_s18.py NATURAL), from ids sorted as text."""
    from harness.compare.check import natural_ranks
    from tests.reports.test_report_leftovers_s18 import NATURAL

    ids = sorted(NATURAL)
    ranks = natural_ranks(ids)
    assert [ids[i] for i in ranks.argsort()] == NATURAL
