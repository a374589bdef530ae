"""The latency gate (``harness check --latency-tolerance``) and the efficiency columns of ``compare``.

Per-query latencies are synthetic (seeded log-normal, as service latencies are skewed); the
expected verdicts follow the rules of harness/compare/latency.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np
import pytest

from harness.compare.latency import search_verdict, stage_verdict
from harness.compare.significance import paired_bootstrap_ratio
from tests.compare.helpers import values, write_result
from tests.compare.test_cli import harness  # noqa: F401 - the in-process CLI fixture

N = 200
HARDWARE = {"cpu": {"model": "Test CPU 3000", "cores": 8, "machine": "x86_64"}, "ram_bytes": 16 * 2 ** 30,
            "gpu": None}


def per_query(latencies: np.ndarray) -> dict[str, float]:
    return {f"q{i}": float(v) for i, v in enumerate(latencies)}


def block(latencies: np.ndarray, hw: dict = HARDWARE, search_s: float | None = None, index_s: float = 2.0) -> dict:
    search_s = search_s if search_s is not None else float(latencies.sum()) / 1000
    return {"stages_s": {"load": 0.5, "index": index_s, "search": search_s, "evaluate": 0.1}, "n_queries": N,
            "queries_per_s": N / search_s,
            "latency_ms": {"p50": float(np.percentile(latencies, 50)), "p95": float(np.percentile(latencies, 95)),
                           "basis": "per request"},
            "index_bytes": 3_000_000, "peak_rss_bytes": 200_000_000,
            "fingerprint": {**hw, "os": "Linux", "python": "3.11", "libraries": {}, "git": None}}


@pytest.fixture
def results(tmp_path):
    rng = np.random.default_rng(7)
    base = rng.lognormal(mean=np.log(5.0), sigma=0.5, size=N)  # ms
    quality = values("NDCG@10", list(rng.uniform(0, 1, N)))

    def write(name: str, latencies: np.ndarray | None, **kw) -> str:
        if latencies is None:
            return str(write_result(tmp_path / name, quality))
        return str(write_result(tmp_path / name, quality, efficiency=block(latencies, **kw),
                                query_latency_ms=per_query(latencies)))

    return SimpleNamespace(
        base=base, baseline=write("baseline", base),
        slower=write("slower", base * 2.0),  # every query twice as slow
        noisy=write("noisy", base * rng.uniform(0.9, 1.1, N)),  # +-10%: within a 20% tolerance
        old=write("old", None),  # written before the efficiency block existed
        other_hw=write("other_hw", base, hw={**HARDWARE, "cpu": {"model": "Other CPU", "cores": 4, "machine": "arm64"}}),
        write=write)


def gate(harness, results, current, *extra):
    return harness("check", "--baseline", results.baseline, "--current", current, "--latency-tolerance", "0.2",
                   "--latency-metric", "p95", *extra)


def test_search_verdict_rules():
    assert search_verdict(2.0, 1.8, 2.2, 0.2) == "REGRESSED"
    assert search_verdict(1.3, 0.95, 1.6, 0.2) == "NOISE"  # beyond tolerance, interval holds 1
    assert search_verdict(1.1, 1.05, 1.15, 0.2) == "OK"  # significant but within tolerance
    assert search_verdict(0.5, 0.45, 0.55, 0.2) == "IMPROVED"
    assert (stage_verdict(1.5, 0.2), stage_verdict(0.5, 0.2), stage_verdict(1.1, 0.2)) == ("SLOWER", "FASTER", "OK")


def test_bootstrap_ratio_of_a_uniform_slowdown_is_exact():
    # b = 2a query by query: every resample's p95 ratio is exactly 2 (percentiles scale linearly).
    a = np.random.default_rng(1).lognormal(size=50)
    ci = paired_bootstrap_ratio(a, 2 * a, lambda rows: np.percentile(rows, 95, axis=1), resamples=500)
    assert ci.low == pytest.approx(2.0) and ci.high == pytest.approx(2.0)


def test_clear_2x_slowdown_regresses_with_exit_1(harness, results, tmp_path):
    proc = gate(harness, results, results.slower, "--json", tmp_path / "check.json")
    assert proc.returncode == 1, proc.stdout
    expected = np.percentile(results.base * 2, 95) / np.percentile(results.base, 95)
    assert expected == pytest.approx(2.0)
    assert "REGRESSED search p95" in proc.stdout and "x2.000" in proc.stdout
    assert "FAILED: regression on latency search p95" in proc.stdout
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["passed"] is False and report["checks"][0]["verdict"] == "OK"  # quality unchanged
    search = report["latency"]["checks"][0]
    assert search["stage"] == "search" and search["verdict"] == "REGRESSED" and search["n_queries"] == N
    assert search["ratio"] == pytest.approx(2.0) and search["ci_low"] > 1.2
    assert search["baseline"] == pytest.approx(np.percentile(results.base, 95))
    # The whole-stage times are single measurements: reported, never failing (load/index/evaluate same here).
    assert {c["stage"]: c["verdict"] for c in report["latency"]["checks"][1:]} == {
        "load": "OK", "index": "OK", "evaluate": "OK"}


def test_noise_within_tolerance_passes(harness, results):
    proc = gate(harness, results, results.noisy)
    assert proc.returncode == 0, proc.stdout
    assert "  OK        search p95" in proc.stdout and proc.stdout.rstrip().endswith("PASSED")


def test_slower_index_alone_never_fails(harness, results):
    current = results.write("slow_index", results.base, index_s=10.0)
    proc = gate(harness, results, current)
    assert proc.returncode == 0 and "SLOWER    index wall: 2 s -> 10 s (x5.000)" in proc.stdout


def test_no_latency_data_does_not_fail(harness, results, tmp_path):
    for baseline, current in ((results.old, results.slower), (results.baseline, results.old)):
        proc = harness("check", "--baseline", baseline, "--current", current, "--latency-tolerance", "0.2",
                       "--json", tmp_path / "c.json", "--junit", tmp_path / "c.xml")
        assert proc.returncode == 0, proc.stdout
        assert "latency: no latency data" in proc.stdout
        latency = json.loads((tmp_path / "c.json").read_text())["latency"]
        assert latency["checks"] == [] and latency["no_data"].startswith("no latency data")
        suite = ET.parse(tmp_path / "c.xml").getroot().find("testsuite")
        assert suite.get("skipped") == "1" and suite.get("failures") == "0"


def test_latency_verdicts_in_junit_and_github_summary(harness, results, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    proc = gate(harness, results, results.slower, "--junit", tmp_path / "check.xml", "--github-summary")
    assert proc.returncode == 1
    suite = ET.parse(tmp_path / "check.xml").getroot().find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "1"  # NDCG@10 + search, load, index, evaluate
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [("harness.check.latency", "search p95")]
    text = summary.read_text()
    assert "FAILED: regression on latency search p95" in text
    assert "| search (p95) | ❌ REGRESSED |" in text and "x2.000" in text


def test_latency_options_are_checked(harness, results):
    bad = gate(harness, results, results.slower, "--latency-metric", "p42")
    assert bad.returncode == 2 and "--latency-metric must be one of p50, p90, p95, p99, mean" in bad.stderr
    negative = harness("check", "--baseline", results.baseline, "--current", results.slower,
                       "--latency-tolerance", "-1")
    assert negative.returncode == 2 and "--latency-tolerance must be >= 0" in negative.stderr


def test_compare_shows_efficiency_columns(harness, results):
    proc = harness("compare", f"base={results.baseline}", f"slow={results.slower}", f"old={results.old}",
                   "--metric", "NDCG@10")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2] == "| system | NDCG@10 | search q/s | p95 ms | index MB | peak RSS MB | hardware |"
    base_qps = N / (results.base.sum() / 1000)
    p95 = np.percentile(results.base, 95)
    row = next(line for line in lines if line.startswith("| base (baseline)"))
    assert row.endswith(f"| {base_qps:,.1f} | {p95:,.3f} | 3.0 | 200.0 | A |")
    slow = next(line for line in lines if line.startswith("| slow "))
    assert slow.endswith(f"| {base_qps / 2:,.1f} | {2 * p95:,.3f} | 3.0 | 200.0 | A |")
    assert next(line for line in lines if line.startswith("| old ")).endswith("| - | - | - | - | - |")
    assert "**A** = Test CPU 3000 (8 cores), 16.0 GiB RAM;" in proc.stdout
    assert "different hardware" not in proc.stdout + proc.stderr


def test_different_hardware_is_flagged(harness, results):
    proc = harness("compare", f"base={results.baseline}", f"arm={results.other_hw}", "--metric", "NDCG@10")
    assert proc.returncode == 0
    assert "**B** = Other CPU (4 cores), 16.0 GiB RAM;" in proc.stdout
    assert "measured on different hardware and are not comparable" in proc.stdout
    assert "warning: timings measured on different hardware are not comparable: base: Test CPU 3000" in proc.stderr
    check = gate(harness, results, results.other_hw)
    assert check.returncode == 0 and "warning: timings measured on different hardware" in check.stdout


def test_cluster_bootstrap_with_singleton_clusters_is_the_query_bootstrap():
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(size=40), rng.lognormal(size=40)
    p95 = lambda rows: np.percentile(rows, 95, axis=1)  # noqa: E731
    plain = paired_bootstrap_ratio(a, b, p95, resamples=300, seed=5)
    singletons = paired_bootstrap_ratio(a, b, p95, resamples=300, seed=5, clusters=np.arange(40)[:, None])
    assert (plain.low, plain.high) == (singletons.low, singletons.high)


def batch_block(shares: list[float], size: int) -> dict:
    """The efficiency block and per-query latencies of a batched search: batch k's queries all get shares[k] ms."""
    latencies = np.repeat(np.asarray(shares, dtype=np.float64), size)[:N]
    out = block(latencies)
    out["latency_ms"].update(basis="per batch share", batch_size=size)
    return {"efficiency": out, "query_latency_ms": per_query(latencies)}


def test_batch_shares_are_resampled_by_batch(harness, tmp_path):
    quality = values("NDCG@10", [0.5] * N)
    shares = [0.3, 0.5, 0.4, 1.2, 0.35, 0.6, 0.45, 0.3, 0.5, 0.4]  # 10 batches of 20 queries, one slow batch
    base = write_result(tmp_path / "base", quality, **batch_block(shares, 20))
    # Another run where a different batch is slow: p95 moves (1.2 -> 2.0 ms) but the batches say it may be chance.
    other = write_result(tmp_path / "other", quality, **batch_block([0.3, 2.0, *shares[2:3], 0.4, *shares[4:]], 20))
    twice = write_result(tmp_path / "twice", quality, **batch_block([2 * s for s in shares], 20))
    noisy = harness("check", "--baseline", base, "--current", other, "--latency-tolerance", "0.2")
    assert noisy.returncode == 0 and "NOISE     search p95: 1.2 ms -> 2 ms (x1.667" in noisy.stdout
    slower = harness("check", "--baseline", base, "--current", twice, "--latency-tolerance", "0.2")
    assert slower.returncode == 1 and "REGRESSED search p95: 1.2 ms -> 2.4 ms (x2.000, CI [2.000, 2.000]" in slower.stdout


def test_without_per_query_latencies_search_is_a_wall_time(harness, results, tmp_path):
    quality = values("NDCG@10", [0.5] * N)
    current = write_result(tmp_path / "bare", quality, efficiency=block(results.base * 3))  # no query_latency_ms
    proc = gate(harness, results, current)
    assert proc.returncode == 0, proc.stdout
    assert "SLOWER    search wall:" in proc.stdout and "(x3.000)" in proc.stdout
    assert "warning: search: fewer than 2 queries with a latency in both results" in proc.stdout


def test_one_timed_batch_is_a_wall_time(harness, tmp_path):
    # A retriever searched in one call (search_batch_size None): every query has the mean; no interval.
    quality = values("NDCG@10", [0.5] * N)
    base = write_result(tmp_path / "base", quality, **batch_block([0.5], N))
    slower = write_result(tmp_path / "slower", quality, **batch_block([1.5], N))
    proc = harness("check", "--baseline", base, "--current", slower, "--latency-tolerance", "0.2")
    assert proc.returncode == 0, proc.stdout
    assert "SLOWER    search wall: 0.1 s -> 0.3 s (x3.000)" in proc.stdout
    assert "warning: search: every query was searched in one timed call" in proc.stdout


def test_the_search_interval_does_not_depend_on_the_order_the_files_list_the_queries(tmp_path):
    # The bootstrap draws queries by position; the positions followed the baseline's query_latency_ms order,
    # so the same latencies listed in another order gave another interval (fresh-eyes review, session 15:
    # the gate's queries are now in query-id order, as compare aligns its queries).
    from harness.compare import load_system
    from harness.compare.latency import check_latency

    rng = np.random.default_rng(3)
    base = rng.lognormal(mean=np.log(5.0), sigma=0.5, size=N)
    cur = base * rng.uniform(0.9, 1.5, N)
    quality = values("NDCG@10", list(rng.uniform(0, 1, N)))
    intervals = set()
    for tag, order in (("numbered", range(N)), ("reversed", range(N - 1, -1, -1))):
        folders = [write_result(tmp_path / tag / name, quality, efficiency=block(lat),
                                query_latency_ms={f"q{i}": float(lat[i]) for i in order})
                   for name, lat in (("baseline", base), ("current", cur))]
        result = check_latency(*(load_system(str(f)) for f in folders), resamples=2000)
        (search,) = [c for c in result.checks if c.stage == "search"]
        intervals.add((search.ci_low, search.ci_high, search.baseline, search.current))
    assert len(intervals) == 1, intervals
