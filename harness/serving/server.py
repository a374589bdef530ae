"""Run an ASGI app with uvicorn on a socket bound first (so port 0 works and the port is known),
in the foreground (``harness serve``) or in a background thread (tests, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free port chosen by the system)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        from harness.errors import HarnessError

        raise HarnessError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(app, log_level: str):
    import uvicorn

    return uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off"))


def serve_forever(app, sock: socket.socket, log_level: str = "warning") -> None:
    """Serve until Ctrl-C / SIGTERM (uvicorn's own signal handling shuts down gracefully)."""
    _server(app, log_level).run(sockets=[sock])


@contextmanager
def serve_in_thread(app, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning",
                    start_timeout: float = 30.0) -> Iterator[str]:
    """Serve ``app`` in a daemon thread while the block runs; yields the base URL. Always stopped."""
    sock = bind(host, port)
    server = _server(app, log_level)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
