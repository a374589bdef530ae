"""The latency gate on two http results sent under different load, and compare's p95 on different
bases (latency review).

A request's latency includes its wait behind the other requests in flight. Against ``harness serve``
(one search at a time) on SciFact, the same service measured at ``concurrency=1`` and at
``concurrency=8`` gave p95 44.7 ms and 450 ms: ``harness check --latency-tolerance 0.2`` said
REGRESSED x10.078 and said nothing of the client settings, which metrics.json records
(``retriever_stats.client``). Expected: a warning naming the setting that differs, as for hardware.
"""

from __future__ import annotations

import json

import numpy as np

from tests.compare.helpers import values, write_result

N = 60


def _http_result(folder, latencies, concurrency: int, qps=None):
    efficiency = {"stages_s": {"load": 0.5, "index": 0.001, "search": 1.0, "evaluate": 0.01}, "n_queries": N,
                  "latency_ms": {"p95": float(np.percentile(latencies, 95)), "basis": "per request", "failed": 0}}
    write_result(folder, values("NDCG@10", [0.5] * N), efficiency=efficiency,
                 query_latency_ms={f"q{i}": float(v) for i, v in enumerate(latencies)})
    path = folder / "metrics.json"
    document = json.loads(path.read_text())
    document["retriever_stats"] = {"queries": N, "failed_queries": [], "failures": {},
                                   "client": {"concurrency": concurrency, "timeout": 30.0, "retries": 3,
                                              "backoff": 0.1, "max_backoff": 5.0, "qps": qps, "on_failure": "fail"}}
    path.write_text(json.dumps(document))
    return folder


def test_the_latency_gate_names_a_different_client_load(harness_cli, tmp_path):
    rng = np.random.default_rng(0)
    one = _http_result(tmp_path / "c1", rng.lognormal(np.log(20.0), 0.3, N), concurrency=1)
    eight = _http_result(tmp_path / "c8", rng.lognormal(np.log(200.0), 0.3, N), concurrency=8)
    proc = harness_cli("check", "--baseline", one, "--current", eight, "--latency-tolerance", "0.2",
                       "--json", tmp_path / "check.json")
    assert proc.returncode == 1 and "REGRESSED search p95" in proc.stdout  # the verdict is still given
    warning = ("the requests were sent under different load (concurrency 1 -> 8; retriever_stats.client): a "
               "request's latency includes its wait behind the others in flight, so the search latencies compare "
               "two loads as well as two services")
    assert f"warning: {warning}" in proc.stdout
    assert warning in json.loads((tmp_path / "check.json").read_text())["latency"]["warnings"]
    capped = _http_result(tmp_path / "q", rng.lognormal(np.log(20.0), 0.3, N), concurrency=1, qps=50)
    assert "(qps None -> 50; retriever_stats.client)" in harness_cli(
        "check", "--baseline", one, "--current", capped, "--latency-tolerance", "0.2").stdout
    same = _http_result(tmp_path / "same", rng.lognormal(np.log(20.0), 0.3, N), concurrency=1)
    assert "different load" not in harness_cli("check", "--baseline", one, "--current", same,
                                               "--latency-tolerance", "0.2").stdout


def test_compare_names_latencies_on_different_bases(harness_cli, tmp_path):
    # The same BM25 on SciFact in process (p95 1.255 ms, a share of a timed batch of 32) and behind harness serve
    # (p95 450 ms per request, queueing included): compare put the two p95 side by side and said only "(per batch
    # share / per request)". Expected, as the latency gate does: a warning naming each result's basis.
    http = _http_result(tmp_path / "http", np.full(N, 40.0), concurrency=8)
    share = write_result(tmp_path / "inproc", values("NDCG@10", [0.5] * N),
                         query_latency_ms={f"q{i}": 0.5 for i in range(N)},
                         efficiency={"stages_s": {"search": 0.03}, "n_queries": N,
                                     "latency_ms": {"p95": 0.5, "basis": "per batch share", "batch_size": 32}})
    proc = harness_cli("compare", share, http, "--metric", "NDCG@10")
    assert proc.returncode == 0, proc.stderr
    assert ("> warning: p95 latencies on different bases are different quantities, not comparable: "
            "inproc: per batch share; http: per request.") in proc.stdout
    same = _http_result(tmp_path / "http2", np.full(N, 40.0), concurrency=8)
    assert "different bases" not in harness_cli("compare", http, same, "--metric", "NDCG@10").stdout
