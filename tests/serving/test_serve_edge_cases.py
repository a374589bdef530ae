"""``harness serve`` on malformed requests (docs/http.md: "Bad requests get HTTP 400 and
{"error": "..."}", never a 500: an unhandled exception, a traceback in the server's log), and the cut
at k of a retriever whose scores are doubles (docs/http.md: the http retriever against it
"reproduces the in-process run")."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from harness.datasets.corpus import Corpus
from harness.serving import create_app
from retrievers import create


@pytest.fixture(scope="module")
def client():
    corpus = Corpus(["d1", "d2"], ["", ""], ["stem cells divide", "cells in the heart"])
    system = create("bm25", cache=False)
    system.index(corpus)
    return TestClient(create_app(system, dataset="tiny", n_documents=2, max_k=50), raise_server_exceptions=False)


@pytest.mark.parametrize("k, shown", [
    ("\u00b2", "'\u00b2'"),  # str.isdigit() is true for a superscript two; int() refuses it
    ("--5", "'--5'"),
    ("9" * 5000, "'" + "9" * 36 + "..."),  # more digits than int() converts (4300)
])
def test_a_k_that_looks_like_digits_but_is_no_integer_gets_400(client, k, shown):
    expected = f"k must be an integer from 1 to 50; got {shown}"
    reply = client.get("/search", params={"q": "stem", "k": k})
    assert reply.status_code == 400 and reply.json() == {"error": expected}
    reply = client.post("/search", json={"k": k, "queries": [{"q": "stem"}]})
    assert reply.status_code == 400 and reply.json() == {"error": expected}


@pytest.mark.parametrize("query", [{"id": "\\udc00", "q": "stem"}, {"id": "a", "q": "stem \\ud800"}])
def test_a_lone_surrogate_in_a_batch_gets_400(client, query):
    """JSON's \\ud800 escapes decode to text no UTF-8 encoder takes: the answer could not be written."""
    body = '{"queries": [{"id": "%s", "q": "%s"}]}' % (query["id"], query["q"])
    reply = client.post("/search", content=body.encode(), headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json() == {
        "error": "queries[0] holds a lone surrogate escape (\\ud800-\\udfff): not valid Unicode text"}


@pytest.mark.parametrize("query, expected", [
    ("q=%ED%A0%80&k=2", "a query parameter is not UTF-8 text once percent-decoded"),  # a lone surrogate's bytes
    ("q=%FF%FE", "a query parameter is not UTF-8 text once percent-decoded"),  # Latin-1
    ("q=stem&id=%E9", "a query parameter is not UTF-8 text once percent-decoded"),
    ("q=cells&q=stem", "query parameter q given more than once"),
])
def test_a_get_whose_parameters_are_no_text_or_repeated_gets_400(client, query, expected):
    """Probe of 2026-11-29: GET replaced such bytes with U+FFFD and searched that text ("query": "\ufffd\ufffd\ufffd",
    200), where POST's "\ud800" got 400; q=cells&q=stem searched "stem"."""
    reply = client.get("/search?" + query)
    assert reply.status_code == 400 and reply.json() == {"error": expected}
    reply = client.get("/search?q=caf%C3%A9+stem&id=%C3%A9")  # (UTF-8 is read as ever)
    assert reply.status_code == 200 and reply.json()["query"] == "caf\u00e9 stem" and reply.json()["query_id"] == "\u00e9"


def test_the_cut_at_k_is_the_evaluators_as_in_harness_run(tmp_path):
    """A run file's scores 1.00000002 (a), 1.00000001 (b), 1.0 (c) are one float32 value: trec_eval-9
    ranks c, b, a, so `harness run --retriever run-file --k 1` scores c (NDCG@1 1 when c is relevant).
    Served with k=2 (depth 1, plus one for the identical-id drop), the float64 cut sent a, b: the http
    retriever's depth-1 pick was then b and NDCG@1 0."""
    from retrievers.run_file import RunFileRetriever

    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1.00000002 t\nq1 Q0 b 2 1.00000001 t\nq1 Q0 c 3 1.0 t\n")
    system = RunFileRetriever(str(path))
    system.index(Corpus(["a", "b", "c"], ["", "", ""], ["x", "y", "z"]))
    served = TestClient(create_app(system, dataset="tiny", n_documents=3))
    hits = served.get("/search", params={"q": "x", "k": 2, "id": "q1"}).json()["hits"]
    assert hits == [{"id": "b", "score": 1.00000001}, {"id": "c", "score": 1.0}]  # canonical order, full scores
    hits = served.post("/search", json={"k": 1, "queries": [{"id": "q1", "q": "x"}]}).json()["results"][0]["hits"]
    assert hits == [{"id": "c", "score": 1.0}]


def test_trec_eval_10_semantics_cut_in_double_order(tmp_path):
    """`harness serve --semantics trec_eval-10` serves the cut `harness run --semantics trec_eval-10`
    makes: scores as doubles, so a (1.00000002) first and k=1 gives a, where trec_eval-9 gives c."""
    from retrievers.run_file import RunFileRetriever

    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1.00000002 t\nq1 Q0 b 2 1.00000001 t\nq1 Q0 c 3 1.0 t\n")
    system = RunFileRetriever(str(path))
    system.index(Corpus(["a", "b", "c"], ["", "", ""], ["x", "y", "z"]))
    served = TestClient(create_app(system, dataset="tiny", n_documents=3, semantics="trec_eval-10"))
    hits = served.get("/search", params={"q": "x", "k": 1, "id": "q1"}).json()["hits"]
    assert hits == [{"id": "a", "score": 1.00000002}]
    assert served.get("/healthz").json()["semantics"] == "trec_eval-10"


def test_serve_refuses_an_unknown_semantics_in_one_line(harness_cli):
    out = harness_cli("serve", "--semantics", "trec_eval-8", "--port", "0")
    assert out.returncode == 2 and "unknown semantics 'trec_eval-8'" in out.stderr


@pytest.mark.parametrize("query_id, shown", [(None, "null"), ([1], "[1]"), (True, "true"), ({"a": 1}, '{"a": 1}')])
def test_a_batch_query_id_that_is_no_string_or_integer_gets_400(client, query_id, shown):
    """An id of null or [1] used to be answered under the ids "None" and "[1]" (Python's str())."""
    reply = client.post("/search", json={"queries": [{"id": query_id, "q": "stem"}]})
    assert reply.status_code == 400
    assert reply.json() == {"error": f'queries[0] "id" must be a string or an integer; got {shown}'}
    reply = client.post("/search", json={"queries": [{"id": 7, "q": "stem"}, {"q": "cell"}]})  # 7 -> "7"; absent -> index
    assert reply.status_code == 200 and [r["query_id"] for r in reply.json()["results"]] == ["7", "1"]
