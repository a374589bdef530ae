"""Latency of an http run some of whose requests failed (``on_failure=empty``): the answered requests
keep their measured latencies, the failed ones are counted apart and are in no percentile.

Found by the latency review: a fake service answering HTTP 500 for 2 of the queries made the harness
drop every per-request latency of the run and give each query one share of the whole call's time
("per batch share", batch_size = all queries): p50 = p95 = p99 = mean, none of them measured, and a
latency gate comparing that with a per-request baseline read x0.137 (docs/efficiency.md, "Latency basis").
Expected, as a load-testing tool reports it: percentiles over the successful requests (the
retriever's own ``query_latency_ms``, numpy's ``np.percentile`` of them), ``latency_ms.failed`` = the
number of failed requests, and compare saying whose latencies leave failures out.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from harness.compare import load_system
from harness.compare.latency import check_latency
from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.reports.efficiency import parse_header
from retrievers.http import HTTPRetriever
from tests.retrievers.http_fakes import FakeEngine, harness_hits

N = 12
FAILING = {"q3", "q7"}


def _dataset() -> Dataset:
    ids = [f"q{i}" for i in range(N)]
    docs = [f"{q}-d{j}" for q in ids for j in range(3)]  # what harness_hits answers: no foreign documents
    return Dataset("toy", "test", Corpus(docs, [""] * len(docs), ["text"] * len(docs)), Queries(ids, ["text"] * N),
                   Qrels.from_dict({q: {f"{q}-d0": 1} for q in ids}), load_s=0.1)


def _answer(request, n):
    qid = request.query.get("id", "")
    time.sleep(0.002 * (1 + int(qid[1:])))  # distinct request times: 2, 4, ... 24 ms
    if qid in FAILING:
        return 500, {"error": "boom"}
    return 200, harness_hits(request)


def _partial_run(folder):
    with FakeEngine(_answer) as engine:
        retriever = HTTPRetriever(url=engine.url, preset="harness", on_failure="empty", retries=0, concurrency=3)
        exp = run_experiment(_dataset(), retriever, Evaluator(["P@1"], k_values=[1]), [1], output_dir=folder)
    return exp, retriever.stats()


def test_failed_requests_leave_the_measured_latencies_of_the_others(tmp_path):
    exp, stats = _partial_run(tmp_path / "partial")
    assert stats["failed_queries"] == sorted(FAILING)
    own = stats["query_latency_ms"]  # what the client measured, request by request (FAILING: none)
    assert set(own) == {f"q{i}" for i in range(N)} - FAILING
    block = exp.document.efficiency["latency_ms"]
    # Formerly: basis "per batch share", batch_size 12, every query (failed ones too) at one share of the call.
    assert block["basis"] == "per request" and "batch_size" not in block
    assert block["failed"] == 2
    assert exp.document.query_latency_ms == {q: round(ms, 6) for q, ms in own.items()}  # as measured, in order
    assert list(exp.document.query_latency_ms) == [f"q{i}" for i in range(N) if f"q{i}" not in FAILING]
    values = np.array(list(own.values()))
    for p in (50, 90, 95, 99):  # oracle: numpy's percentile of the answered requests' latencies
        assert block[f"p{p}"] == pytest.approx(float(np.percentile(values, p)), rel=1e-12)
    assert block["mean"] == pytest.approx(values.mean(), rel=1e-12) and block["max"] == values.max()
    assert not any("query_latency_ms" in w for w in exp.document.warnings or [])
    written = json.loads((tmp_path / "partial" / "metrics.json").read_text())
    assert written["efficiency"]["latency_ms"]["failed"] == 2 and len(written["query_latency_ms"]) == N - 2
    header = parse_header((tmp_path / "partial" / "run.trec").read_text().splitlines())
    assert header["latency_ms"]["failed"] == 2


def test_a_complete_http_run_records_zero_failed_requests(tmp_path):
    with FakeEngine(lambda r, n: (200, harness_hits(r))) as engine:
        exp = run_experiment(_dataset(), HTTPRetriever(url=engine.url, preset="harness"),
                             Evaluator(["P@1"], k_values=[1]), [1])
    block = exp.document.efficiency["latency_ms"]
    assert block["basis"] == "per request" and block["failed"] == 0 and len(exp.document.query_latency_ms) == N


def test_compare_and_the_latency_gate_say_the_failed_requests_are_left_out(tmp_path, harness_cli):
    exp, _ = _partial_run(tmp_path / "partial")
    with FakeEngine(lambda r, n: (200, harness_hits(r))) as engine:
        run_experiment(_dataset(), HTTPRetriever(url=engine.url, preset="harness"), Evaluator(["P@1"], k_values=[1]),
                       [1], output_dir=tmp_path / "complete")
    proc = harness_cli("compare", tmp_path / "complete", tmp_path / "partial", "--metric", "P@1",
                       "--json", tmp_path / "c.json")
    assert proc.returncode == 0, proc.stderr
    assert ("> warning: partial: 2 requests failed (retriever_stats.failures); its latencies are those of the 10 "
            "queries answered, without the failed ones.") in proc.stdout
    assert "complete: " not in proc.stdout
    speed = json.loads((tmp_path / "c.json").read_text())["efficiency"]
    assert (speed["partial"]["failed"], speed["complete"]["failed"]) == (2, 0)
    assert speed["partial"]["p95_ms"] == exp.document.efficiency["latency_ms"]["p95"]
    # the HTML report's efficiency table has the count as a column (every figure of the block is shown)
    proc = harness_cli("report", tmp_path / "complete", tmp_path / "partial", "--metric", "P@1",
                       "-o", tmp_path / "report.html")
    assert proc.returncode == 0, proc.stderr
    assert "<th>latency_ms.failed</th>" in (tmp_path / "report.html").read_text()
    # the gate (Python API; harness check refuses a partial run first) compares the measured latencies, saying so
    result = check_latency(load_system(str(tmp_path / "complete")), load_system(str(tmp_path / "partial")),
                           tolerance=100.0, resamples=200)
    search = next(c for c in result.checks if c.stage == "search")
    assert search.statistic == "p95" and search.n_queries == N - 2
    assert ("the current's 2 failed requests have no latency: its search latencies are those of the queries "
            "answered") in result.warnings
