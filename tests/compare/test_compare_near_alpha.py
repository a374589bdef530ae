"""harness compare warns when a Monte Carlo p-value (Holm-adjusted) lies within 3 standard errors of alpha.

check warned of this already (tests/compare/test_check_near_alpha.py); compare marked the same cell
significant at p = 0.048 with no word that 200,000 draws put it at 0.053 (the exact p is 0.0531).
Worked example (the values of tests/compare/test_input_order_review.py): 60 queries, mean 0.575 -> 0.545,
10,000 seeded sign vectors give p = 0.048, se = sqrt(0.048 * 0.952 / 10,000) = 0.0021, |0.048 - 0.05| < 3 se.

With more systems the p-value shown is Holm's, ``p'_(i) = max_{j<=i} (m - j + 1) p_(j)``, and its standard error
is that of the raw p which attains the max, times the same factor (:func:`holm_standard_errors`).
"""

from __future__ import annotations

import json
import math

import pytest

from harness.compare import Settings, align, compare, load_system
from harness.compare.significance import holm_standard_errors, near_alpha
from harness.compare.table import comparison_markdown
from tests.compare.helpers import write_result
from tests.compare.test_input_order_review import N, _p10

SE = math.sqrt(0.048 * 0.952 / 10_000)  # 0.0021376...


def _folders(tmp_path, systems: dict[str, float]):
    """baseline plus one folder per name: the 'current' column of _p10 minus ``shift``."""
    base, cur = _p10()
    folders = [write_result(tmp_path / "baseline", {f"q{i}": {"P@10": float(base[i])} for i in range(N)})]
    for name, shift in systems.items():
        folders.append(write_result(tmp_path / name, {f"q{i}": {"P@10": float(cur[i]) - shift} for i in range(N)}))
    return folders


def _compare(folders, **settings):
    return compare(align([load_system(str(f)) for f in folders], ["P@10"]), settings=Settings(**settings))


def test_two_systems_a_p_near_alpha_is_warned_about_in_the_table_json_and_stderr(tmp_path, harness_cli):
    folders = _folders(tmp_path, {"current": 0.0})
    result = _compare(folders)
    cell = result.cells[("current", "P@10")]
    assert round(cell.p_value, 4) == 0.048 and cell.significant
    warning = (f"current vs baseline, P@10: the randomization p = {cell.p_value:.4g} is within 3 standard errors "
               f"(se {SE:.2g}) of alpha = 0.05, so whether it is significant rests on the 10,000 random draws: more "
               "--permutations (or --test t) settle it")
    assert result.warnings == [warning]
    assert f"> warning: {warning}" in comparison_markdown(result)
    done = harness_cli("compare", *folders, "-m", "P@10", "--json", tmp_path / "c.json")
    assert done.returncode == 0
    assert f"warning: {warning}" in done.stderr
    assert json.loads((tmp_path / "c.json").read_text())["warnings"] == [warning]
    # 200,000 draws: p about the exact 0.0531, se 0.0005: no longer within 3 se, not significant, no warning
    more = _compare(folders, permutations=200_000)
    assert not more.cells[("current", "P@10")].significant and more.warnings == []


@pytest.mark.parametrize("settings", [{"test": "t"}, {"alpha": 0.01}])
def test_no_warning_for_the_t_test_or_a_p_far_from_alpha(tmp_path, settings):
    assert _compare(_folders(tmp_path, {"current": 0.0}), **settings).warnings == []


def test_holm_scales_the_standard_error_with_the_p_value(tmp_path):
    # a far system (every value 0.1 lower: p = 1/10,001) leaves current's adjusted p at its own 0.048: warned
    result = _compare(_folders(tmp_path, {"current": 0.0, "far": 0.1}))
    assert result.cells[("current", "P@10")].p_value == 480 / 10_001  # ((extreme + 1) / (draws + 1))
    assert result.warnings[0].startswith("current vs baseline, P@10: the randomization p (Holm-adjusted) = 0.048 ")
    assert len(result.warnings) == 1
    # two systems of the same values: each p 0.048, both adjusted to 2 x 0.048 = 0.096 with se 2 x 0.0021:
    # |0.096 - 0.05| = 0.046 > 3 x 0.0043, not significant whatever the draws: no warning
    twins = _compare(_folders(tmp_path / "twins", {"current": 0.0, "twin": 0.0}))
    assert twins.cells[("twin", "P@10")].p_value == 2 * 480 / 10_001
    assert twins.warnings == []


def test_holm_standard_errors_worked_example():
    # sorted p: 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04); the running max is attained at 0.01, then
    # 0.03 for the last two, so 0.04's adjusted p (0.06) is 2 x 0.03 and has 0.03's standard error, even though
    # 0.04 itself was exact
    se = holm_standard_errors([0.01, 0.04, 0.03], [1000, None, 1000])
    assert se.tolist() == pytest.approx([3 * math.sqrt(0.01 * 0.99 / 1000), 2 * math.sqrt(0.03 * 0.97 / 1000),
                                         2 * math.sqrt(0.03 * 0.97 / 1000)], rel=1e-12)
    assert holm_standard_errors([0.02], [None]).tolist() == [0.0]  # exact: no error
    assert holm_standard_errors([0.6, 0.7], [100, 100]).tolist() == [0.0, 0.0]  # clipped at 1
    assert holm_standard_errors([0.048], [10_000])[0] == pytest.approx(SE, rel=1e-12)
    assert near_alpha(0.048, SE, 0.05) and not near_alpha(0.04, SE, 0.05) and not near_alpha(0.05, 0.0, 0.05)


def test_the_report_warns_as_compare_does_and_of_a_group_letter_near_alpha(tmp_path, harness_cli):
    from harness.reports.html import build_report, load_results

    folders = _folders(tmp_path / "toy", {"current": 0.0, "far": 0.1})
    section = build_report(load_results([str(tmp_path / "toy")]), ["P@10"], baseline="baseline").datasets[0]
    versus = {v["system"]: v for v in section.versus}
    assert versus["current"]["p_holm"] == 480 / 10_001 and versus["current"]["significant"]
    near = [w for w in section.warnings if "standard errors" in w]
    assert near == [
        # the group letters (Holm over the 3 pairs: current vs far and baseline vs far p = 1/10,001 come first,
        # x3 and x2; baseline vs current keeps its own 0.048 and se)
        f"baseline and current, P@10: the randomization p (Holm-adjusted over the 3 pairs) = 0.048 is within 3 "
        f"standard errors (se {SE:.2g}) of alpha = 0.05, so whether they share a group letter rests on the 10,000 "
        "random draws: more --permutations (or --test t) settle it",
        # the baseline's family (Holm over current and far): compare's line, word for word
        _compare(folders).warnings[0]]
    done = harness_cli("report", tmp_path / "toy", "--metric", "P@10", "--baseline", "baseline",
                       "-o", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    assert f"warning: toy: {near[0]}" in done.stderr and f"warning: toy: {near[1]}" in done.stderr
