"""The http retriever's client against misbehaving fake services: retries, timeouts, malformed answers,
the failure policy, bounded concurrency, the QPS cap, secrets and Ctrl-C (the last three through the CLI)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from harness.datasets import load_dataset
from harness.datasets.corpus import Queries
from harness.errors import HarnessWarning
from retrievers.http import HTTPRetriever, QueryFailed
from tests.retrievers.http_fakes import FakeEngine, Received, harness_hits

ONE = Queries(["q1"], ["stem cells"])
FAST = {"preset": "harness", "backoff": 0.01, "max_backoff": 0.05}


def ok(request: Received, n: int):
    return 200, harness_hits(request)


def retriever(engine: FakeEngine, **params) -> HTTPRetriever:
    return HTTPRetriever(url=engine.url, **{**FAST, **params})


def test_a_500_then_200_is_retried_and_the_attempts_are_counted():
    with FakeEngine(lambda r, n: (500, {"error": "busy"}) if n == 0 else ok(r, n)) as engine:
        system = retriever(engine)
        run = system.search(ONE, 10)
    assert len(engine.received) == 2
    assert run.to_dict() == {"q1": {"q1-d0": 10.0, "q1-d1": 9.0, "q1-d2": 8.0}}
    stats = system.stats()
    assert (stats["attempts"], stats["retried_queries"], stats["failed_queries"]) == (2, 1, [])
    assert set(stats["latency_ms"]) == {"mean", "p50", "p90", "p95", "p99", "max"}
    assert list(stats["query_latency_ms"]) == ["q1"]


def test_429_honours_retry_after_and_a_service_that_keeps_failing_fails_after_every_attempt():
    with FakeEngine(lambda r, n: (429, {}, {"Retry-After": "0"}) if n == 0 else ok(r, n)) as engine:
        assert retriever(engine).search(ONE, 10).n_queries == 1
    assert len(engine.received) == 2
    with FakeEngine(lambda r, n: (503, {"error": "overloaded"})) as engine:
        with pytest.raises(QueryFailed, match=r"query 'q1' failed: HTTP 503 from GET http://127\.0\.0\.1:\d+/search: "
                                              r"'\{\"error\": \"overloaded\"\}' \(after 3 attempts\)"):
            retriever(engine, retries=2).search(ONE, 10)
    assert len(engine.received) == 3  # the first try and 2 retries


def test_connection_refused_is_retried_then_named():
    with socket.socket() as sock:  # a port with nothing listening on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    system = HTTPRetriever(url=f"http://127.0.0.1:{port}", retries=1, **FAST)
    with pytest.raises(QueryFailed, match=r"query 'q1' failed: connection error: ConnectError: .* \(GET http://127\.0\.0"
                                          rf"\.1:{port}/search\) \(after 2 attempts\)$"):
        system.search(ONE, 10)


def test_a_failure_after_retried_attempts_says_how_many():
    """A 503 (retried), then a 404 (not retried): the query's error names the attempts, as a retried error's does
    (it said nothing of the first)."""
    with FakeEngine(lambda r, n: (503, {}) if n == 0 else (404, {"error": "gone"})) as engine:
        with pytest.raises(QueryFailed, match=r"query 'q1' failed: HTTP 404 from GET .*/search: .*\(after 2 attempts\)$"):
            retriever(engine, retries=2).search(ONE, 10)
    assert len(engine.received) == 2


def test_a_service_that_hangs_times_out_naming_the_query_and_is_not_retried():
    with FakeEngine(lambda r, n: engine.hang()) as engine:
        with pytest.raises(QueryFailed, match=r"^http retriever: query 'q1' failed: timed out after 0\.3 s "
                                              r"\(GET http://127\.0\.0\.1:\d+/search\)$"):
            retriever(engine, timeout=0.3).search(ONE, 10)
    assert len(engine.received) == 1


@pytest.mark.parametrize("status, payload, message", [
    (200, b"<html>oops</html>",
     r"the response of GET http://127\.0\.0\.1:\d+/search is not valid JSON \(.*\); it starts '<html>oops</html>'"),
    (200, b'{"hits": [{"id": "d1", "score": 1.0}', r"the response of GET .*/search is not valid JSON"),
    (200, {"results": []}, r"the response has no 'hits'"),
    (404, {"error": "no such index"}, r"HTTP 404 from GET .*/search: '\{\"error\": \"no such index\"\}'"),
])
def test_malformed_or_refused_answers_fail_clearly_without_retrying(status, payload, message):
    with FakeEngine(lambda r, n: (status, payload)) as engine:
        with pytest.raises(QueryFailed, match="query 'q1' failed: " + message):
            retriever(engine).search(ONE, 10)
    assert len(engine.received) == 1


def test_the_empty_policy_keeps_going_and_lists_the_failed_queries():
    def answer(request, n):
        return {"q2": (500, {}), "q3": (200, b"not json")}.get(request.query["id"]) or ok(request, n)

    queries = Queries(["q1", "q2", "q3", "q4"], ["a", "b", "c", "d"])
    with FakeEngine(answer) as engine:
        system = retriever(engine, on_failure="empty", retries=1)
        with pytest.warns(HarnessWarning, match=r"^http retriever: 2 of 4 queries failed .*: q2, q3$"):
            run = system.search(queries, 2)
    assert {q: list(d) for q, d in run.to_dict().items()} == {"q1": ["q1-d0", "q1-d1"], "q2": [], "q3": [],
                                                              "q4": ["q4-d0", "q4-d1"]}
    stats = system.stats()
    assert stats["failed_queries"] == ["q2", "q3"]
    assert "HTTP 500" in stats["failures"]["q2"] and "not valid JSON" in stats["failures"]["q3"]
    assert set(stats["query_latency_ms"]) == {"q1", "q4"} and stats["attempts"] == 5


def test_concurrency_is_bounded():
    # The first request is answered only once a second one has come (bounded: 60 s), so that a client that sends
    # them at once is seen with two in flight however loaded the machine (two requests 50 ms each did not overlap
    # when the second came 50 ms late).
    second = threading.Event()

    def slow(request, n):
        if n == 1:
            second.set()
        if n == 0:
            second.wait(60)
        time.sleep(0.05)
        return ok(request, n)

    queries = Queries([f"q{i}" for i in range(12)], ["x"] * 12)
    with FakeEngine(slow) as engine:
        run = retriever(engine, concurrency=3).search(queries, 10)
    assert run.n_queries == 12 and len(engine.received) == 12
    assert 1 < engine.max_in_flight <= 3


def test_the_qps_cap_spaces_requests():
    """The pacer schedules attempt i at t0 + i/qps and never lets one start before its slot (measured
    where the pacer runs: arrival times at the server can bunch up on a loaded machine)."""
    import asyncio
    import time

    from retrievers.http.client import _Pacer

    async def starts():
        pacer, out = _Pacer(20), []
        t0 = time.monotonic()
        for _ in range(6):
            await pacer.wait()
            out.append(time.monotonic() - t0)
        return out

    times = asyncio.run(starts())
    assert all(t >= i / 20 - 0.002 for i, t in enumerate(times))  # slot i starts no earlier than i/20 s
    queries = Queries([f"q{i}" for i in range(6)], ["x"] * 6)
    with FakeEngine(ok) as engine:
        retriever(engine, concurrency=6, qps=20).search(queries, 10)
    assert len(engine.received) == 6


# ----------------------------------------------------------------------------- through the CLI
def harness(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HARNESS_PROGRESS": "0", **(env or {})})


def test_a_hanging_service_exits_2_naming_the_query_and_writes_nothing(tmp_path):
    first = load_dataset("scifact", "test").queries.ids[0]
    with FakeEngine(lambda r, n: engine.hang() if r.query["id"] == first else ok(r, n)) as engine:
        proc = harness("run", "--dataset", "scifact", "--retriever", "http", "--param", f"url={engine.url}",
                       "--param", "preset=harness", "--param", "timeout=0.5", "-o", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: http retriever: query '{first}' failed: timed out after 0.5 s (GET {engine.url}/search)"]
    assert not any(tmp_path.iterdir())


def test_the_secret_named_in_a_header_is_sent_but_appears_nowhere_in_the_results(tmp_path):
    secret = "sk-test-6f1d2c0e9b-secret"

    def guarded(request, n):
        if request.headers.get("authorization") != f"Bearer {secret}":
            return 401, {"error": "bad key"}
        return ok(request, n)

    with FakeEngine(guarded) as engine:
        proc = harness("run", "--dataset", "scifact", "--retriever", "http", "--param", f"url={engine.url}",
                       "--param", "preset=harness", "--param", 'headers={"Authorization": "Bearer ${SEARCH_API_KEY}"}',
                       "--k", "10", "-o", str(tmp_path), env={"SEARCH_API_KEY": secret})
    assert proc.returncode == 0, proc.stderr
    assert len(engine.received) == 300
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    # (.lock: the empty file the result folder's writers lock, harness.reports.writer.LOCK)
    assert {p.name for p in files} == {"metrics.json", "metrics.md", "per_query.jsonl", "run.trec", ".lock"}
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "scifact" / "http" / "metrics.json").read_text())
    assert doc["retriever"]["params"]["headers"] == {"Authorization": "Bearer ${SEARCH_API_KEY}"}
    assert doc["retriever_stats"]["queries"] == 300 and doc["retriever_stats"]["failed_queries"] == []


def test_ctrl_c_stops_cleanly_and_writes_nothing(tmp_path):
    with FakeEngine(lambda r, n: engine.hang()) as engine:
        # (timeout=600: on a loaded machine the 8 requests may take a while to all arrive; none may time
        # out before the Ctrl-C, which would end the run with exit 2 instead)
        proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--dataset", "scifact", "--retriever", "http",
                                 "--param", f"url={engine.url}", "--param", "preset=harness", "--param", "timeout=600",
                                 "-o", str(tmp_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "HARNESS_PROGRESS": "0"},
                                # a user's Ctrl-C reaches a process whose SIGINT is not ignored; the tests may run
                                # where it is (a background job of a non-interactive shell: `bash .ci/run &`), and
                                # the child would inherit that and never see the signal sent below
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.monotonic() + 60
            while len(engine.received) < 8 and time.monotonic() < deadline:  # every worker is waiting
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert len(engine.received) == 8  # concurrency 8: never more requests in flight
    assert proc.returncode == 130 and "Traceback" not in err, err  # 128 + SIGINT, the shell's convention
    assert not any(tmp_path.iterdir())


def test_search_works_inside_a_running_event_loop():
    """A notebook runs an event loop; search() then runs its own in a helper thread."""
    import asyncio

    async def inside():
        with FakeEngine(ok) as engine:
            return retriever(engine).search(ONE, 2)

    assert asyncio.run(inside()).to_dict() == {"q1": {"q1-d0": 10.0, "q1-d1": 9.0}}


def test_a_password_in_the_url_stays_out_of_error_messages():
    with FakeEngine(lambda r, n: (404, {"error": "no such index"})) as engine:
        url = engine.url.replace("http://", "http://elastic:hunter2@")
        with pytest.raises(QueryFailed) as failed:
            HTTPRetriever(url=url, **FAST).search(ONE, 10)
        with pytest.raises(Exception) as counted:
            HTTPRetriever(url=url, index_check=True, **FAST).index(load_dataset("scifact", "test").corpus)
    assert "HTTP 404 from GET http://elastic:<redacted>@127.0.0.1" in str(failed.value)
    assert str(counted.value).startswith("index_check: GET http://elastic:<redacted>@127.0.0.1")
    assert "hunter2" not in str(failed.value) + str(counted.value)
    assert engine.received[0].headers["authorization"].startswith("Basic ")  # the password is still sent


def test_the_empty_policy_through_the_cli_scores_failed_queries_0_and_lists_them(tmp_path):
    ids = load_dataset("scifact", "test").queries.ids
    failing = {ids[0], ids[1]}
    with FakeEngine(lambda r, n: (500, {}) if r.query["id"] in failing else ok(r, n)) as engine:
        proc = harness("run", "--dataset", "scifact", "--retriever", "http", "--param", f"url={engine.url}",
                       "--param", "preset=harness", "--param", "on_failure=empty", "--param", "retries=0",
                       "--k", "10", "-o", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (f"warning: http retriever: 2 of 300 queries failed and have empty rankings (on_failure=empty; causes in "
            f"metrics.json retriever_stats.failures): {', '.join(sorted(failing))}") in proc.stderr
    doc = json.loads((tmp_path / "scifact" / "http" / "metrics.json").read_text())
    assert doc["retriever_stats"]["failed_queries"] == sorted(failing)
    assert all(doc["per_query"][q]["NDCG@10"] == 0 for q in failing)


def test_a_secret_named_in_the_body_is_sent_redacted_from_errors_and_appears_nowhere_in_the_results(tmp_path):
    """``${SEARCH_API_KEY}`` in a JSON body (a service that takes its key there): the key is sent, and
    neither the result files, nor the output, nor the error line of a service that echoes it hold it;
    metrics.json records the reference, and a literal secret-looking body value as ``<redacted>``."""
    secret = "sk-body-2b7e151628aed2a6-secret"

    def guarded(request, n):
        if (request.body or {}).get("auth", {}).get("api_key") != secret:
            return 401, {"error": "bad key"}
        return ok(request, n)

    template = ["--param", "method=POST", "--param", 'params={"q": "{query}", "k": "{k}", "id": "{query_id}"}',
                "--param", 'body={"auth": {"api_key": "${SEARCH_API_KEY}"}, "token": "literal-tok-123"}',
                "--param", "hits=hits", "--param", "id_field=id", "--param", "score_field=score"]
    with FakeEngine(guarded) as engine:
        proc = harness("run", "--dataset", "scifact", "--retriever", "http", "--param", f"url={engine.url}/search",
                       *template, "--k", "10", "-o", str(tmp_path / "ok"), env={"SEARCH_API_KEY": secret})
    assert proc.returncode == 0, proc.stderr
    assert len(engine.received) == 300
    files = [p for p in (tmp_path / "ok").rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"metrics.json", "metrics.md", "per_query.jsonl", "run.trec", ".lock"}
    for path in files:
        assert secret.encode() not in path.read_bytes() and b"literal-tok-123" not in path.read_bytes(), path
    assert secret not in proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "ok" / "scifact" / "http" / "metrics.json").read_text())
    assert doc["retriever"]["params"]["body"] == {"auth": {"api_key": "${SEARCH_API_KEY}"}, "token": "<redacted>"}

    def echoing(request, n):  # a service whose refusal quotes the request
        return 401, {"error": f"invalid api key {(request.body or {}).get('auth', {}).get('api_key')}"}

    with FakeEngine(echoing) as engine:
        proc = harness("run", "--dataset", "scifact", "--retriever", "http", "--param", f"url={engine.url}/search",
                       *template, "-o", str(tmp_path / "refused"), env={"SEARCH_API_KEY": secret})
    assert proc.returncode == 2 and "HTTP 401" in proc.stderr and "<redacted>" in proc.stderr, proc.stderr
    assert secret not in proc.stdout + proc.stderr
