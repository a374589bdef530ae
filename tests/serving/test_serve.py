"""``harness serve`` and the http retriever end to end: BM25 on the bundled SciFact served over HTTP gives
the same run and NDCG@10 (0.6789, Anserini's flat BM25, README / results/baselines) as in process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from starlette.testclient import TestClient

from harness.datasets import load_dataset
from harness.datasets.corpus import Corpus, Queries
from harness.experiment import search_run
from harness.formats.trec import read_run
from harness.serving import create_app, serve_in_thread, serve_process
from retrievers import create
from retrievers.http import HTTPRetriever
from tests.conftest import REPO


@pytest.fixture(scope="module")
def scifact():
    return load_dataset("scifact", "test")


@pytest.fixture(scope="module")
def bm25(scifact):
    system = create("bm25")
    system.index(scifact.corpus)
    return system


def same_runs(a, b) -> None:
    """Identical query ids, and per query identical document ids and scores in the canonical order."""
    a, b = a.canonical(), b.canonical()
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.offsets, b.offsets)
    assert a.doc_vocab[a.doc_codes].tolist() == b.doc_vocab[b.doc_codes].tolist()
    assert np.array_equal(a.scores, b.scores)


# ----------------------------------------------------------------------------- the app
@pytest.fixture(scope="module")
def tiny():
    corpus = Corpus(["d1", "d2", "d3", "d4"], ["", "", "", ""],
                    ["stem cells divide", "cells in the heart", "stem cells stem cells", "unrelated words"])
    system = create("bm25", cache=False)
    system.index(corpus)
    return TestClient(create_app(system, dataset="tiny", n_documents=4, max_k=50)), system


def test_get_search_answers_in_the_harness_shape(tiny):
    client, system = tiny
    reply = client.get("/search", params={"q": "stem cells", "k": 2, "id": "q9"})
    assert reply.status_code == 200
    expected = system.search(Queries(["q9"], ["stem cells"]), 2).canonical()
    assert reply.json() == {"query_id": "q9", "query": "stem cells", "k": 2,
                            "hits": [{"id": d, "score": s} for d, s in
                                     zip(expected.doc_ids(0), expected.scores.tolist())]}
    assert [h["id"] for h in reply.json()["hits"]] == ["d3", "d1"]  # two "stem", two "cells" first
    assert client.get("/search", params={"q": "zebra"}).json()["hits"] == []


def test_post_search_answers_a_batch(tiny):
    client, system = tiny
    reply = client.post("/search", json={"k": 3, "queries": [{"id": "a", "q": "heart"}, {"id": "b", "q": "stem"}]})
    assert reply.status_code == 200
    body = reply.json()
    assert body["k"] == 3 and [r["query_id"] for r in body["results"]] == ["a", "b"]
    assert [h["id"] for h in body["results"][0]["hits"]] == ["d2"]
    assert [h["id"] for h in body["results"][1]["hits"]] == ["d3", "d1"]


@pytest.mark.parametrize("method, kwargs, message", [
    ("get", {"params": {"k": 3}}, "missing query parameter q"),
    ("get", {"params": {"q": "x", "k": 0}}, "k must be an integer from 1 to 50; got 0"),
    ("get", {"params": {"q": "x", "k": "ten"}}, "k must be an integer from 1 to 50; got 'ten'"),
    ("post", {"content": b"{oops"}, "the body must be JSON"),
    ("post", {"json": {"queries": "x"}}, "the body must be an object with a \"queries\" list"),
    ("post", {"json": {"queries": [{"id": "a"}]}}, "queries[0] must be an object with a string \"q\""),
    ("post", {"json": {"queries": [{"id": "a", "q": "x"}, {"id": "a", "q": "y"}]}}, "query ids in a batch must be"),
    ("post", {"json": {"k": 51, "queries": []}}, "k must be an integer from 1 to 50; got 51"),
])
def test_bad_requests_get_400_and_a_reason(tiny, method, kwargs, message):
    client, _ = tiny
    reply = getattr(client, method)("/search", **kwargs)
    assert reply.status_code == 400 and reply.json()["error"].startswith(message)


def test_healthz(tiny):
    client, system = tiny
    assert client.get("/healthz").json() == {"status": "ok", "retriever": "bm25", "params": system.params(),
                                              "dataset": "tiny", "documents": 4, "semantics": "trec_eval-9"}


# ----------------------------------------------------------------------------- end to end
def test_http_retriever_against_harness_serve_gives_the_in_process_run_and_ndcg(tmp_path, scifact, bm25):
    with serve_process("--dataset", "scifact", "--retriever", "bm25") as url:
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "--dataset", "scifact", "--retriever", "http",
                               "--param", f"url={url}", "--param", "preset=harness", "--param", "concurrency=8",
                               "--param", "index_check=true", "--k", "10,100", "--depth", "100", "-o", str(tmp_path)],
                              capture_output=True, text=True, env={**os.environ, "HARNESS_PROGRESS": "0"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "scifact" / "http"
    doc = json.loads((folder / "metrics.json").read_text())
    same_runs(read_run(folder / "run.trec"), search_run(bm25, scifact, 100, ignore_identical_ids=True))
    baseline = json.loads((REPO / "results/baselines/scifact/bm25/metrics.json").read_text())["metrics"]["NDCG@10"]
    assert doc["metrics"]["NDCG@10"] == baseline and round(baseline, 4) == 0.6789  # the committed in-process value
    stats = doc["retriever_stats"]
    assert stats["queries"] == 300 and stats["failed_queries"] == [] and stats["client"]["concurrency"] == 8
    assert stats["index_check"] == {"expected": 5183, "found": 5183} and len(stats["query_latency_ms"]) == 300


def test_load_300_requests_at_concurrency_16(scifact, bm25):
    """The bounded version of benchmarks/serve_load.py: no errors, latency percentiles reported."""
    queries = Queries([f"{i}-{q}" for i in range(2) for q in scifact.queries.ids][:300],
                      [t for _ in range(2) for t in scifact.queries.texts][:300])
    with serve_in_thread(create_app(bm25, dataset="scifact", n_documents=len(scifact.corpus))) as url:
        client = HTTPRetriever(url=url, preset="harness", concurrency=16, timeout=30, retries=0)
        run = client.search(queries, 10)
    stats = client.stats()
    assert stats["queries"] == 300 and stats["attempts"] == 300 and stats["failed_queries"] == []
    p = stats["latency_ms"]
    assert 0 < p["p50"] <= p["p90"] <= p["p95"] <= p["p99"] <= p["max"]
    print(f"\n300 requests at concurrency 16: p50 {p['p50']:.1f} ms, p95 {p['p95']:.1f} ms, p99 {p['p99']:.1f} ms, "
          f"{stats['throughput_qps']:.0f} queries/s")
    direct = bm25.search(Queries(list(scifact.queries.ids), list(scifact.queries.texts)), 10).canonical()
    served = run.canonical()
    assert served.doc_ids(0) == direct.doc_ids(0) and served.doc_ids(299) == direct.doc_ids(299)


def test_a_busy_port_is_one_line_and_exit_2():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "harness", "serve", "--port", str(port)], capture_output=True,
                              text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: cannot listen on 127.0.0.1:{port}: Address already in use"]
