"""Second review of the numbers ``harness compare`` and ``harness check`` print and write: boundaries of
the verdict tables (docs/compare.md), each expected value with its source."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from harness.compare.latency import check_latency, search_verdict, stage_verdict


def _system(ms: float, stage_s: float):
    efficiency = {"stages_s": {"load": stage_s}, "latency_ms": {"basis": "per request"}}
    latencies = {f"q{i}": ms for i in range(20)}
    document = SimpleNamespace(efficiency=efficiency, query_latency_ms=latencies)
    return SimpleNamespace(document=document, source=Path("metrics.json"))


def test_a_latency_change_of_exactly_the_tolerance_is_ok():
    # docs/compare.md: OK when 1 / (1 + TOL) <= ratio <= 1 + TOL. 0.009 -> 0.0108 is exactly 1.2 times
    # slower (0.0108 = 0.009 * 1.2 in decimals), but 0.0108 / 0.009 computes as 1.2000000000000002 > 1.2:
    # the gate failed (exit 1) on a slowdown of exactly the tolerance. The reverse, exactly 1/1.2, computes as
    # 0.8333333333333333 < 1 / 1.2 = 0.8333333333333334 (FASTER / IMPROVED instead of OK).
    assert 0.0108 / 0.009 > 1 + 0.2 and 0.009 / 0.0108 < 1 / (1 + 0.2)  # (the rounding this is about)
    assert search_verdict(0.0108 / 0.009, 0.0108 / 0.009, 0.0108 / 0.009, 0.2) == "OK"
    assert search_verdict(0.009 / 0.0108, 0.009 / 0.0108, 0.009 / 0.0108, 0.2) == "OK"
    assert (stage_verdict(0.0108 / 0.009, 0.2), stage_verdict(0.009 / 0.0108, 0.2)) == ("OK", "OK")
    result = check_latency(_system(0.009, 0.009), _system(0.0108, 0.0108), "p95", 0.2, resamples=200)
    assert [(c.stage, c.verdict) for c in result.checks] == [("search", "OK"), ("load", "OK")]
    assert not result.regressed
    # just beyond the tolerance is still judged: 0.009 -> 0.01081 (x1.2011) regresses, the interval is [x1.2011]
    result = check_latency(_system(0.009, 0.009), _system(0.01081, 0.01081), "p95", 0.2, resamples=200)
    assert [(c.stage, c.verdict) for c in result.checks] == [("search", "REGRESSED"), ("load", "SLOWER")]


def test_the_printed_confidence_of_the_latency_interval_is_the_one_used():
    # The interval's confidence is 1 - alpha (docs/compare.md); --alpha 0.005 drew a 99.5% interval (JSON
    # "confidence": 0.995) that the report and the job summary called "100%" (format ':.0%').
    from harness.compare.check import CheckResult
    from harness.compare.ci import github_summary
    from harness.compare.latency import format_latency

    result = check_latency(_system(1.0, 1.0), _system(1.0, 1.0), "p95", 0.2, alpha=0.005, resamples=200)
    assert result.confidence == 0.995
    assert format_latency(result)[0].endswith(", 99.5% bootstrap interval of the ratio")
    summary = github_summary(CheckResult([], 20, 0.005, 0.005, "t", [], latency=result), "b", "c")
    assert "99.5% bootstrap interval of the ratio" in summary and "100%" not in summary
    alpha_001 = check_latency(_system(1.0, 1.0), _system(1.0, 1.0), "p95", 0.2, alpha=0.001, resamples=200)
    assert ", 99.9% bootstrap interval" in format_latency(alpha_001)[0]
    assert ", 95% bootstrap interval" in format_latency(check_latency(_system(1.0, 1.0), _system(1.0, 1.0),
                                                                      resamples=200))[0]


def test_check_writes_a_lone_surrogate_query_id_as_compare_does(harness_cli, tmp_path):
    # A '\ud800' escape in a metrics file's query id (hand-edited or foreign; harness compare takes it,
    # harness.compare.table.valid_text) made harness check fail with exit 2 and "'utf-8' codec can't encode
    # character '\ud800'" once that query was among the listed losers: no verdict for a regressed gate.
    import json

    from tests.compare.helpers import values, write_result

    odd = "\ud800q"
    base = values("NDCG@10", [1.0] * 8)
    base[odd] = base.pop("q0")
    cur = {q: {"NDCG@10": 0.0} for q in base}  # every query lost 1.0: exact p = 2 / 2^8 = 0.0078 < 0.05
    write_result(tmp_path / "base", base)
    write_result(tmp_path / "cur", cur)
    out = harness_cli("check", "--baseline", tmp_path / "base", "--current", tmp_path / "cur", "--show", "8",
                      "--json", tmp_path / "check.json")
    assert out.returncode == 1, out.stderr  # REGRESSED, not bad input
    assert "\ufffdq" in out.stdout and out.stdout.encode("utf-8")  # printable as UTF-8
    written = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert written["checks"][0]["verdict"] == "REGRESSED" and written["checks"][0]["p_value"] == 2 / 256
    assert odd in [q["query_id"] for q in written["checks"][0]["worst_queries"]]  # the escape reads back as the id


def test_the_details_table_names_the_confidence_of_its_intervals(tmp_path):
    # Settings(confidence=0.995) draws 99.5% intervals; the details table's header said "100% CI".
    from harness.compare import Settings, align, compare, load_system
    from harness.compare.table import details_table
    from tests.compare.helpers import values, write_result

    a = write_result(tmp_path / "a", values("NDCG@10", [0.1, 0.5, 0.9]))
    b = write_result(tmp_path / "b", values("NDCG@10", [0.2, 0.5, 0.7]))
    aligned = align([load_system(str(a)), load_system(str(b))], ["NDCG@10"])
    table = details_table(compare(aligned, settings=Settings(confidence=0.995, resamples=100)))
    assert "| 99.5% CI |" in table.splitlines()[0]
    assert "| 95% CI |" in details_table(compare(aligned, settings=Settings(resamples=100))).splitlines()[0]



def test_the_check_json_records_the_permutations_and_seed_of_its_p_values(tmp_path):
    """A Monte Carlo p-value is reproducible from the JSON alone: randomization_test with the recorded
    permutations and seed gives the recorded p (20 changed queries: 2^20 > 500, so the flips are drawn)."""
    import numpy as np

    from harness.compare import align, load_system
    from harness.compare.check import run_check
    from harness.compare.significance import randomization_test
    from tests.compare.helpers import values, write_result

    rng = np.random.default_rng(7)
    base = rng.random(40).round(4)
    cur = base.copy()
    cur[:20] -= (0.05 + rng.random(20) * 0.1).round(4)
    a = load_system(str(write_result(tmp_path / "baseline", values("NDCG@10", base.tolist()))))
    b = load_system(str(write_result(tmp_path / "current", values("NDCG@10", cur.tolist()))))
    result = run_check(align([a, b], ["NDCG@10"]), tolerance=0.0, permutations=500, seed=11).to_dict()
    assert (result["permutations"], result["seed"], result["test"]) == (500, 11, "randomization")
    again = randomization_test(base, cur, permutations=result["permutations"], seed=result["seed"]).p_value
    assert result["checks"][0]["p_value"] == again
