"""Fake search services for the http retriever's tests: a threaded HTTP server on 127.0.0.1 (free
port) whose answers come from a function, with every request logged. Always stopped on exit."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any  # decoded JSON, or None
    at: float

    @property
    def text(self) -> str | None:
        """The query text, wherever the engine's request carries it."""
        if "q" in self.query:
            return self.query["q"]
        query = (self.body or {}).get("query")
        if isinstance(query, dict):  # Elasticsearch DSL: {"multi_match": {"query": ...}} or {"match": {"text": ...}}
            inner = next(iter(query.values()))
            query = inner.get("query", next(iter(inner.values())))
        return query


# An answer: (status, JSON value or raw bytes[, extra headers]).
Answer = tuple


class FakeEngine:
    def __init__(self, answer: Callable[[Received, int], Answer]):
        """``answer(request, n)``: the reply to a request, n = how many requests came before it."""
        self.answer = answer
        self.received: list[Received] = []
        self.in_flight = self.max_in_flight = 0
        self.stop = threading.Event()  # a hanging answer waits on it; set at exit
        self._lock = threading.Lock()
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = Received(self.command, parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                                   {k.lower(): v for k, v in self.headers.items()},
                                   json.loads(raw) if raw else None, time.monotonic())
                with engine._lock:
                    n = len(engine.received)
                    engine.received.append(request)
                    engine.in_flight += 1
                    engine.max_in_flight = max(engine.max_in_flight, engine.in_flight)
                try:
                    reply = engine.answer(request, n)
                finally:
                    with engine._lock:
                        engine.in_flight -= 1
                status, payload, *extra = reply
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (extra[0] if extra else {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def hang(self) -> Answer:
        """Never answer (until the fake is stopped; at most 10 minutes)."""
        self.stop.wait(600)
        return 503, {"error": "stopped"}

    def __enter__(self) -> "FakeEngine":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def harness_hits(request: Received) -> dict:
    """A ``harness serve``-shaped answer whose hits are derived from the query id: deterministic."""
    qid = request.query.get("id", "")
    k = int(request.query.get("k", 10))
    return {"query_id": qid, "hits": [{"id": f"{qid}-d{i}", "score": float(10 - i)} for i in range(min(k, 3))]}
