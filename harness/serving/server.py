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
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on an accepted connection only when its socket's
    # proto says TCP; without it Nagle held each response's body until the client's delayed ACK, and
    # every request after the first on a keep-alive connection took 40 ms more.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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


@contextmanager
def serve_process(*args: str, env: dict | None = None, stop_timeout: float = 15.0) -> Iterator[str]:
    """``harness serve --port 0 ARGS`` in a subprocess while the block runs; yields its URL. Always stopped.

    Raises RuntimeError with the server's stderr if it exits before it serves.
    """
    import os
    import subprocess
    import sys

    command = [sys.executable, "-m", "harness", "serve", "--port", "0", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "HARNESS_PROGRESS": "0", **(env or {})})
    try:
        line = process.stdout.readline()  # "serving NAME on DATASET (N documents) at URL (Ctrl-C stops)"
        if " at http" not in line:
            process.kill()
            raise RuntimeError(f"harness serve did not start: {line}{process.stderr.read()}".strip())
        yield line.split(" at ")[1].split()[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
