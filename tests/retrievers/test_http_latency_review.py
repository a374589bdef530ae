"""What the http client times as a query's latency (latency review).

docs/http.md: a query's latency runs "from its first attempt to its parsed answer (retries and
backoff included; waiting for a free worker or the QPS cap excluded)". The QPS cap's wait before a
retry was timed: at ``qps=2``, ``concurrency=1``, a query answered HTTP 500 once and then 200 was
recorded at 506 ms against 4 ms for the next query, 500 ms of it the client waiting for its turn.
"""

from __future__ import annotations

import types

import retrievers.http.client as client
from harness.datasets.corpus import Queries
from retrievers.http import HTTPRetriever
from tests.retrievers.http_fakes import FakeEngine, harness_hits


def test_the_qps_caps_wait_before_a_retry_is_not_timed(monkeypatch):
    # A clock that only the QPS cap moves (100 s per wait): whatever the cap waits must not reach a latency.
    # Expected (docs/http.md): 0 for every query, the retried one too; formerly q1 was timed at 100 s (the
    # cap's wait before its retry), q2 at 0.
    clock = [0.0]

    async def wait(self):
        clock[0] += 100.0

    monkeypatch.setattr(client._Pacer, "wait", wait)
    monkeypatch.setattr(client, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    with FakeEngine(lambda r, n: (500, {"error": "busy"}) if n == 0 else (200, harness_hits(r))) as engine:
        system = HTTPRetriever(url=engine.url, preset="harness", qps=2, concurrency=1, backoff=0.001,
                               max_backoff=0.002)
        system.search(Queries(["q1", "q2"], ["a", "b"]), 10)
    stats = system.stats()
    assert (stats["attempts"], stats["retried_queries"]) == (3, 1)
    assert stats["query_latency_ms"] == {"q1": 0.0, "q2": 0.0}


def test_a_retried_querys_latency_is_its_attempts_and_backoff_summed(monkeypatch):
    # Each attempt takes 5 (fake) seconds of the service and the backoff 1: 500, 500, 200 gives 5 + 1 + 5 + 1 + 5
    # = 17 s (docs/http.md: retries and backoff included), whatever the cap waited (10 s before each attempt).
    clock = [0.0]

    async def wait(self):
        clock[0] += 10.0

    def backoff(*args):  # the backoff sleep is asyncio.sleep(0); its 1 s passes on the clock
        clock[0] += 1.0
        return 0.0

    attempt = client._attempt

    async def timed(*args, **kwargs):
        try:
            return await attempt(*args, **kwargs)
        finally:
            clock[0] += 5.0

    monkeypatch.setattr(client._Pacer, "wait", wait)
    monkeypatch.setattr(client, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(client, "_attempt", timed)
    monkeypatch.setattr(client, "backoff_delay", backoff)
    with FakeEngine(lambda r, n: (500, {"error": "busy"}) if n < 2 else (200, harness_hits(r))) as engine:
        system = HTTPRetriever(url=engine.url, preset="harness", qps=2, concurrency=1)
        system.search(Queries(["q1"], ["a"]), 10)
    assert system.stats()["query_latency_ms"] == {"q1": 17_000.0}
