"""Review of the latency gate: stage times that are no finite number > 0, ratios that overflow, and
the reason given when a result has no efficiency block; the JSON stays strict (docs/compare.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.atomic import indented_json
from harness.compare.latency import check_latency, format_latency
from tests.compare.test_cli import harness  # noqa: F401 - the in-process CLI fixture


def system(stages: dict | None, latencies: dict | None = None):
    efficiency = None if stages is None else {"stages_s": stages, "latency_ms": {"basis": "per request"}}
    document = SimpleNamespace(efficiency=efficiency, query_latency_ms=latencies)
    return SimpleNamespace(document=document, source=Path("metrics.json"))


def strict(result) -> dict:
    return json.loads(indented_json(result.to_dict()),
                      parse_constant=lambda name: pytest.fail(f"the latency JSON holds {name}"))


LATENCIES = {"q1": 1.0, "q2": 2.0, "q3": 3.0}


@pytest.mark.parametrize("infinite", ["baseline", "current", "both"])
def test_an_infinite_stage_time_is_not_compared(infinite):
    # Formerly "OK index wall: inf s -> inf s (xnan)" (or FASTER / SLOWER against inf), and --json held
    # Infinity and NaN. An infinite time is no measurement, like NaN and 0 (skipped already).
    base = {"load": 0.5, "index": math.inf if infinite in ("baseline", "both") else 2.0}
    cur = {"load": 0.5, "index": math.inf if infinite in ("current", "both") else 2.0}
    result = check_latency(system(base, LATENCIES), system(cur, LATENCIES), "p95", 0.2, resamples=200)
    assert [(c.stage, c.verdict) for c in result.checks] == [("search", "OK"), ("load", "OK")]
    strict(result)


def test_a_ratio_past_the_largest_double_is_null_in_the_json():
    # 1 s against 5e-324 s: the ratio overflows to inf; SLOWER, as it is, but JSON has no Infinity.
    result = check_latency(system({"load": 5e-324}, LATENCIES), system({"load": 1.0}, LATENCIES), "p95", 0.2,
                           resamples=200)
    load = next(c for c in result.checks if c.stage == "load")
    assert load.verdict == "SLOWER" and math.isinf(load.ratio)
    assert next(c for c in strict(result)["checks"] if c["stage"] == "load")["ratio"] is None


def test_no_efficiency_block_names_the_pipeline_among_the_causes():
    result = check_latency(system(None), system({"load": 1.0}, LATENCIES))
    assert result.no_data.startswith("no latency data: the baseline has no efficiency block")
    assert "by a pipeline" in result.no_data and format_latency(result) == [f"latency: {result.no_data}"]


def test_a_nan_latency_tolerance_is_named_as_the_option(harness, tmp_path):
    # Formerly NaN passed the option's check and was refused later, after both results were read and
    # checked, as "latency tolerance must be >= 0, got nan" (not the option's name).
    from tests.compare.helpers import values, write_result

    quality = values("NDCG@10", [0.5, 0.6, 0.7])
    base = write_result(tmp_path / "base", quality, efficiency={"stages_s": {"load": 1.0}}, query_latency_ms=LATENCIES)
    proc = harness("check", "--baseline", base, "--current", base, "--latency-tolerance", "nan")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --latency-tolerance must be >= 0 and finite, got nan"


@pytest.mark.parametrize("option, message", [
    ("--latency-tolerance", "error: --latency-tolerance must be >= 0 and finite, got inf"),
    ("--tolerance", "error: --tolerance must be >= 0 and finite, got inf"),
])
def test_an_infinite_tolerance_is_refused(harness, tmp_path, option, message):
    # inf was accepted and written to --json as "tolerance": Infinity, which is not JSON (efficiency review)
    from tests.compare.helpers import values, write_result

    base = write_result(tmp_path / "base", values("NDCG@10", [0.5, 0.6, 0.7]), efficiency={"stages_s": {"load": 1.0}},
                        query_latency_ms=LATENCIES)
    proc = harness("check", "--baseline", base, "--current", base, option, "inf", "--json", str(tmp_path / "c.json"))
    assert (proc.returncode, proc.stderr.strip()) == (2, message)
    assert not (tmp_path / "c.json").exists()
