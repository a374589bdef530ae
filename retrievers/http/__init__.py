"""The ``http`` retriever: query a live search service (Elasticsearch, OpenSearch, Solr, Vespa,
``harness serve``, your own API) over HTTP and score what it returns.

    harness run --dataset scifact --retriever http --param url=http://localhost:9200/scifact \\
        --param preset=elasticsearch --param concurrency=8

Indexing stays the service's job: :meth:`HTTPRetriever.index` only checks, with
``index_check=true`` (or an expected number), that the service holds as many documents as the
dataset. :meth:`HTTPRetriever.search` sends one request per query (retrievers/http/client.py) and
returns the hits in canonical order. The request template and response mapping are in
:meth:`params`; the client settings, per-query latencies and failures in :meth:`stats` (recorded
as ``retriever_stats`` in metrics.json). Secrets never reach either (retrievers/http/template.py).
Presets: retrievers/http/presets.py; user guide: docs/http.md.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError, HarnessWarning
from harness.run import Run
from retrievers.base import Retriever
from retrievers.http.client import ClientSettings, QueryFailed, fetch_all, with_query
from retrievers.http.presets import preset as load_preset
from retrievers.http.template import FieldPath, RequestTemplate, TemplateString, _url_component, redact_url

__all__ = ["HTTPRetriever", "QueryFailed"]

class HTTPRetriever(Retriever):
    """Search a service over HTTP (see the module docstring and docs/http.md for every parameter)."""

    name = "http"
    measures_latency = True  # stats()["query_latency_ms"]: per request
    cache_runs = False  # a pipeline stage's run is keyed by answers_sha256 (params()), which no lookup knows
    index_required = False  # the service holds the index: index() only checks its size (index_check)

    def __init__(self, url: str = "", preset: str | None = None, path: str | None = None, method: str | None = None,
                 params: dict | None = None, body: Any = None, headers: dict | None = None,
                 hits: str | None = None, id_field: str | None = None, score_field: str | None = None,
                 partial_field: Any = None, concurrency: int = 8, timeout: float = 30.0, retries: int = 3,
                 backoff: float = 0.1, max_backoff: float = 5.0, qps: float | None = None, on_failure: str = "fail",
                 index_check: bool | int = False):
        spec = load_preset(preset) if preset is not None else {}
        overrides = {"method": method, "params": params, "body": body, "hits": hits, "id_field": id_field,
                     "score_field": score_field, "partial_field": partial_field}
        spec.update({key: value for key, value in overrides.items() if value is not None})
        if path is not None:
            spec["path"] = path
        if not isinstance(url, str) or not url:
            raise HarnessError("the http retriever needs --param url=http://host:port/...")
        self.preset = preset
        self._count = spec.pop("count", None)
        # the path goes before the URL's query string (?api_key=${KEY}): appended after it, it was sent as
        # part of the query string's last value, to the service's root
        base, mark, self._query = url.partition("?")
        self._base = base.rstrip("/") if spec.get("path") else base
        self.template = RequestTemplate.build(
            url=self._base + spec.pop("path", "") + mark + self._query, method=spec.get("method", "GET"),
            params=spec.get("params"),
            body=spec.get("body"), headers=headers, hits=spec.get("hits"), id_field=spec.get("id_field"),
            score_field=spec.get("score_field"), hits_optional=spec.get("hits_optional", False),
            partial_field=spec.get("partial_field"))
        self.settings = ClientSettings(concurrency=concurrency, timeout=timeout, retries=retries, backoff=backoff,
                                       max_backoff=max_backoff, qps=qps, on_failure=on_failure)
        if not (isinstance(index_check, bool) or (isinstance(index_check, int) and index_check >= 0)):
            raise HarnessError(f"index_check takes true, false or an expected document count; got {index_check!r}")
        if index_check is not False and self._count is None:
            raise HarnessError("index_check needs a preset that knows how to count documents "
                               "(elasticsearch, opensearch, solr, vespa, harness)")
        self.index_check = index_check
        self._stats: dict = {}
        self._answers_sha256: str | None = None

    # ------------------------------------------------------------------------- the interface
    def params(self) -> dict:
        """The request template and response mapping, and ``answers_sha256``: the sha256 of the run the
        last search made of the service's answers (None before a search). A live service answers what its
        index holds now: a pipeline stage is keyed by params() (a run cached under the answers' digest is
        never found by a lookup before the search, so the service is queried every time, and a stage after
        it is reused only when the service answered exactly as before), a bench cell's fingerprint too."""
        return {"preset": self.preset, **self.template.describe(), "answers_sha256": self._answers_sha256}

    def stats(self) -> dict:
        return dict(self._stats)

    def index(self, corpus: Corpus) -> None:
        """Nothing to build: the service holds the index. With ``index_check``, compare its size."""
        if self.index_check is False:
            return
        expected = len(corpus) if self.index_check is True else int(self.index_check)
        found = self.count_documents()
        self._stats["index_check"] = {"expected": expected, "found": found}
        if found != expected:
            raise HarnessError(f"index_check: the service at {redact_url(self._base)} holds {found:,} "
                               f"documents, expected {expected:,}")

    def search(self, queries: Queries, k: int) -> Run:
        ids, texts = list(queries.ids), list(queries.texts)
        start = time.perf_counter()
        outcomes = fetch_all(self.template, ids, texts, k, self.settings, self.template.header_values(),
                             self.template.env_values())
        wall = time.perf_counter() - start
        self._stats = {**{key: value for key, value in self._stats.items() if key == "index_check"},
                       **_outcome_stats(ids, outcomes, wall), "client": self.settings.as_dict()}
        failed = self._stats["failed_queries"]
        if failed:  # (a warning, not a line on stderr: a library prints nothing; the CLI prints it as before)
            import warnings

            shown = ", ".join(failed[:5]) + (f", ... (+{len(failed) - 5} more)" if len(failed) > 5 else "")
            warnings.warn(HarnessWarning(
                f"http retriever: {len(failed)} of {len(ids)} queries failed and have empty rankings "
                f"(on_failure=empty; causes in metrics.json retriever_stats.failures): {shown}"),
                stacklevel=3)  # (the line that called search(), past its check: harness.retriever)
        vocab: dict[str, int] = {}
        codes: list[int] = []
        scores: list[float] = []
        offsets = [0]
        for outcome in outcomes:
            codes.extend(vocab.setdefault(doc_id, len(vocab)) for doc_id in outcome.hits.ids)
            scores.extend(outcome.hits.scores)
            offsets.append(len(codes))
        run = Run.from_arrays(ids, np.asarray(offsets), np.asarray(codes, dtype=np.int64),
                              np.asarray(scores, dtype=np.float64), list(vocab), vocab)
        semantics = getattr(self, "ranking_semantics", None)
        if semantics is not None:  # a service that sent more than k hits: cut in the evaluator's order (under
            # trec_eval-9 scores equal in float32 tie and the larger id ranks first), as the run-file retriever does
            from harness.evaluation.semantics import top_depth

            run = top_depth(run, k, semantics)
        else:
            run = run.truncated(k)
        self._answers_sha256 = _run_sha256(run)
        return run

    # ------------------------------------------------------------------------- index check
    def count_documents(self) -> int:
        """The number of documents the service reports (the preset's count request)."""
        import httpx

        count = self._count
        url = self._base + count["path"]
        field = FieldPath.parse(count["field"], "count field")
        where = f"{count['method']} {redact_url(url)}"  # (without the query string, which may hold a secret)
        if self._query:  # the URL's own query string, its ${VAR} expanded as in a search (no query: blank placeholders)
            url += "?" + TemplateString.parse(self._query, "url", env=True).render(
                {"query": "", "query_id": "", "k": "", **self.template.env_values()}, escape=_url_component)
        url, params = with_query(url, count.get("params"))
        try:
            response = httpx.request(count["method"], url, params=params, json=count.get("body"),
                                     headers=self.template.header_values(), timeout=self.settings.timeout)
        except httpx.LocalProtocolError as exc:  # a request that cannot be sent: its text may quote a header's value
            raise HarnessError(f"index_check: {where} could not be sent ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:  # connection errors and timeouts; their text names no URL
            raise HarnessError(f"index_check: {where} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 300:  # a redirect is not followed: its body holds no count
            location = response.headers.get("location")
            raise HarnessError(f"index_check: {where} answered HTTP {response.status_code}"
                               + (f" (a redirect to {redact_url(location)}, not followed)" if location else ""))
        try:
            payload = response.json()
            value = field.get(payload)
        except (ValueError, KeyError, RecursionError) as exc:
            raise HarnessError(f"index_check: no document count at {field.source!r} in the answer to {where} "
                               f"({type(exc).__name__}: {exc})") from None
        signal = self.template.partial_signal(payload)  # (a shard that failed the count: a short count, unexplained)
        if signal is not None:
            raise HarnessError(f"index_check: a partial answer to {where}: {signal}; its count ({value!r}) is not "
                               "the index's")
        if isinstance(value, bool) or not isinstance(value, int):
            raise HarnessError(f"index_check: {field.source!r} is {value!r}, not a document count")
        return value


def _run_sha256(run: Run) -> str:
    """sha256 of a run's content: per query, in order, one JSON line ``[query id, [doc ids], [scores]]``
    (scores as JSON writes a double: exactly)."""
    import hashlib
    import json

    digest = hashlib.sha256()
    docs, scores, offsets = run.doc_vocab[run.doc_codes].tolist(), run.scores.tolist(), run.offsets.tolist()
    for i, qid in enumerate(run.query_ids.tolist()):
        start, end = offsets[i], offsets[i + 1]
        digest.update(json.dumps([qid, docs[start:end], scores[start:end]]).encode("utf-8") + b"\n")
    return digest.hexdigest()


def _outcome_stats(ids: list[str], outcomes: list, wall_s: float) -> dict:
    """Attempts, failures and latency (ms) of one search."""
    latencies = {qid: o.latency_s * 1000 for qid, o in zip(ids, outcomes) if o.latency_s is not None}
    failed = {qid: o.error for qid, o in zip(ids, outcomes) if o.error is not None}
    values = np.fromiter(latencies.values(), dtype=np.float64, count=len(latencies))
    summary = {}
    if len(values):
        summary = {"mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
                   "p90": float(np.percentile(values, 90)), "p95": float(np.percentile(values, 95)),
                   "p99": float(np.percentile(values, 99)), "max": float(values.max())}
    return {
        "queries": len(ids),
        "attempts": int(sum(o.attempts for o in outcomes)),
        "retried_queries": int(sum(o.attempts > 1 for o in outcomes)),
        "failed_queries": sorted(failed),
        "failures": failed,
        "wall_s": wall_s,
        "throughput_qps": len(ids) / wall_s if wall_s > 0 else None,
        "latency_ms": summary,
        "query_latency_ms": latencies,
    }

