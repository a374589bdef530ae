"""The best value of a column is bold for every system that reaches it (found by a review of the tables)."""

from __future__ import annotations

from fractions import Fraction

from harness.compare import Settings, align, compare, load_system
from harness.compare.table import comparison_table
from tests.compare.helpers import write_result

# P@3 hits per query of two systems: the same values in another query order, so the same mean
# (exactly 36/60 = 0.6), which numpy summed to 0.6 for A and 0.5999999999999999 for B (ids q00 ... q19: the
# query-id order the systems are aligned in is the order given); the order-free mean of NUMBERS_VERSION 3
# (harness.evaluation.mean) is 0.6 for both.
A = [3, 3, 2, 2, 3, 2, 1, 0, 2, 0, 2, 0, 3, 3, 0, 3, 1, 0, 3, 3]
B = [2, 0, 1, 3, 3, 2, 3, 3, 3, 3, 0, 0, 3, 1, 2, 3, 2, 0, 2, 0]


def test_equal_means_summed_in_another_order_are_both_best(tmp_path):
    assert sum(Fraction(h, 3) for h in A) == sum(Fraction(h, 3) for h in B)  # equal means, exactly
    folders = [str(write_result(tmp_path / name, {f"q{i:02d}": {"P@3": h / 3} for i, h in enumerate(hits)}))
               for name, hits in (("base", [1] * 20), ("A", A), ("B", B))]
    result = compare(align([load_system(f) for f in folders], ["P@3"]), None,
                     Settings(test="t", permutations=100, resamples=100))
    assert result.means["A"]["P@3"] == result.means["B"]["P@3"] == 0.6  # (numpy's: 0.6 and 0.5999999999999999)
    assert result.best("P@3") == {"A", "B"}
    table = comparison_table(result)
    assert "| A | **0.6000** ▲ |" in table and "| B | **0.6000** ▲ |" in table
