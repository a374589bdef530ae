"""harness check warns when a Monte Carlo p-value is within 3 standard errors of alpha.

The randomization test's p is an estimate from ``--permutations`` seeded sign vectors. A verdict is then
reproducible but can be decided by the draws rather than by the data. Worked example (the values of
tests/compare/test_input_order_review.py): 60 queries of P@10-like values, mean 0.575 -> 0.545 (-0.03,
beyond the 0.005 tolerance), exact p 0.0531 (every sign flip counted there); with 10,000 sign vectors and
seed 0 the estimate is 0.0480 (REGRESSED), se = sqrt(0.048 * 0.952 / 10,000) = 0.0021, and
|0.0480 - 0.05| = 0.002 < 3 se, so check says so. A t-test or an exact randomization p, a p far from
alpha, and an OK verdict (within the tolerance: no test decides it) get no such warning.
"""

from __future__ import annotations

import json
import math

from harness.compare import align, load_system
from harness.compare.check import run_check
from tests.compare.helpers import write_result
from tests.compare.test_input_order_review import N, _p10


def _aligned(tmp_path, shift: float = 0.0):
    base, cur = _p10()
    folders = [write_result(tmp_path / name, {f"q{i}": {"P@10": float(column[i]) - (shift if name == "current" else 0)}
                                              for i in range(N)})
               for name, column in (("baseline", base), ("current", cur))]
    return folders, align([load_system(str(f)) for f in folders], ["P@10"])


def test_a_monte_carlo_p_near_alpha_is_warned_about(tmp_path, harness_cli):
    folders, aligned = _aligned(tmp_path)
    result = run_check(aligned, ["P@10"])
    (check,) = result.checks
    assert (check.verdict, round(check.p_value, 4)) == ("REGRESSED", 0.048)
    se = math.sqrt(check.p_value * (1 - check.p_value) / 10_000)
    assert round(se, 4) == 0.0021
    assert result.warnings == [f"P@10: the randomization p = {check.p_value:.4g} is within 3 standard errors (se "
                               f"{se:.2g}) of alpha = 0.05, so REGRESSED rests on the 10,000 random draws: more "
                               "--permutations (or --test t) settle it"]
    done = harness_cli("check", "--baseline", folders[0], "--current", folders[1], "-m", "P@10", "--show", "0",
                       "--json", tmp_path / "check.json")
    assert done.returncode == 1
    assert "warning: P@10: the randomization p = 0.048 is within 3 standard errors" in done.stdout + done.stderr
    assert json.loads((tmp_path / "check.json").read_text())["warnings"] == result.warnings
    # 200,000 draws: se 0.0005, the estimate (about the exact 0.0531) is more than 3 se from alpha: no warning
    more = run_check(aligned, ["P@10"], permutations=200_000)
    assert more.checks[0].verdict == "NOISE" and more.warnings == []


def test_no_warning_for_the_t_test_a_p_far_from_alpha_or_an_ok_verdict(tmp_path):
    _, aligned = _aligned(tmp_path)
    assert run_check(aligned, ["P@10"], test="t").warnings == []
    assert run_check(aligned, ["P@10"], tolerance=0.05).checks[0].verdict == "OK"
    assert run_check(aligned, ["P@10"], tolerance=0.05).warnings == []
    _, shifted = _aligned(tmp_path / "far", shift=0.1)  # every current value 0.1 lower: p = 1 / 10,001
    far = run_check(shifted, ["P@10"])
    assert far.checks[0].verdict == "REGRESSED" and far.checks[0].p_value < 0.001 and far.warnings == []
