"""A retriever's own latencies that leave out a searched query are refused with a reason that says so.

docs/efficiency.md: a retriever that times its own queries returns ``query_latency_ms`` from ``stats()``;
"unless every other searched query has a finite number >= 0 there ..., those latencies are not used
(... metrics.json's ``warnings`` says why)". For a query absent from the dict the reason read
"query 'b' is None, not a finite number >= 0 ms": a value the retriever never gave. A None it did give
is still named as such.
"""

from __future__ import annotations

from harness.reports import efficiency


def test_a_query_left_out_of_the_latencies_is_named_as_missing():
    latencies, why = efficiency.measured_latencies({"a": 1.0}, ["a", "b"])
    assert latencies is None
    assert why == ("the retriever's query_latency_ms for query 'b' is missing: its own latencies are not used; "
                   "each query gets its share of the timed call")


def test_a_none_the_retriever_gave_is_still_named():
    latencies, why = efficiency.measured_latencies({"a": 1.0, "b": None}, ["a", "b"])
    assert latencies is None
    assert why.startswith("the retriever's query_latency_ms for query 'b' is None, not a finite number >= 0 ms: ")
