"""An in-process HTTP server on 127.0.0.1 (ephemeral port) that misbehaves on request.

Paths are ``/<mode>/<file>``; ``files`` maps file names to bytes. Modes:

    ok          the file, with Range support (206 + Content-Range)
    fail500     HTTP 500 for the first ``fail_count`` requests, then as ``ok``
    always500   HTTP 500 every time
    fail429     HTTP 429 with ``Retry-After: 2`` for the first ``fail_count`` requests, then as ``ok``
    fail408     HTTP 408 (no Retry-After) for the first ``fail_count`` requests, then as ``ok``
    always429   HTTP 429 with ``Retry-After: 3600`` every time
    nolength    no Content-Length, the body ended by closing the connection (as HTTP/1.0 servers send it); the
                first answer is cut in half that way, unseen by the client; then whole
    nolengthcut as ``nolength``, cut in half every time
    truncate    the first answer promises the whole file but sends half and closes; then as ``ok``
    alwayscut   every answer is cut in half
    slow        as ``ok``, sent in 16 KiB pieces 20 ms apart (to be killed midway)
    missing     HTTP 404
    gzip        as ``ok``, gzip-encoded (Content-Encoding: gzip) when the request's Accept-Encoding names gzip,
                as a web server compressing its answers does (ranges count the encoded bytes)
    gzipalways  gzip-encoded whatever the request accepts (a server that ignores Accept-Encoding: identity)
    redirectloop   302 to itself, for ever

Every request is logged as (mode, file, Range header or None). Bounded: it serves only while the
fixture is open and only to this machine.
"""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FlakyServer:
    def __init__(self, files: dict[str, bytes], fail_count: int = 1):
        self.files = files
        self.fail_count = fail_count
        self.log: list[tuple[str, str, str | None]] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, mode: str, name: str) -> str:
        return f"{self.base}/{mode}/{name}"

    def __enter__(self) -> "FlakyServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _count(self, key: str) -> int:
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                _, mode, name = self.path.split("/", 2)
                rng = self.headers.get("Range")
                server.log.append((mode, name, rng))
                n = server._count(f"{mode}/{name}")
                data = server.files.get(name)
                if mode == "missing" or data is None:
                    return self._status(404)
                if mode == "always500" or (mode == "fail500" and n <= server.fail_count):
                    return self._status(500)
                if mode == "fail429" and n <= server.fail_count:
                    return self._status(429, {"Retry-After": "2"})
                if mode == "fail408" and n <= server.fail_count:
                    return self._status(408)
                if mode == "always429":
                    return self._status(429, {"Retry-After": "3600"})
                if mode in ("nolength", "nolengthcut"):
                    self.send_response(200)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    cut = mode == "nolengthcut" or n == 1
                    self.wfile.write(data[: len(data) // 2] if cut else data)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if mode == "redirectloop":
                    self.send_response(302)
                    self.send_header("Location", self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                accepts = [c.split(";")[0].strip() for c in (self.headers.get("Accept-Encoding") or "").split(",")]
                encoded = mode == "gzipalways" or (mode == "gzip" and "gzip" in accepts)
                if encoded:
                    data = gzip.compress(data, compresslevel=6, mtime=0)
                start = 0
                if rng and rng.startswith("bytes="):
                    start = int(rng[6:].split("-", 1)[0])
                    if start >= len(data):
                        return self._status(416)
                body = data[start:]
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                if encoded:
                    self.send_header("Content-Encoding", "gzip")
                self.end_headers()
                if mode == "alwayscut" or (mode == "truncate" and n == 1):
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if mode == "slow":
                    for i in range(0, len(body), 16384):
                        self.wfile.write(body[i:i + 16384])
                        self.wfile.flush()
                        time.sleep(0.02)
                    return
                self.wfile.write(body)

            def _status(self, code: int, headers: dict[str, str] | None = None) -> None:
                payload = f"status {code}\n".encode()
                self.send_response(code)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
