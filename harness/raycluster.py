"""Starting or joining Ray (an optional extra): one place for the benchmark's Ray executor
(harness/bench/executors.py) and the dense retriever's Ray encoder (retrievers/dense/distributed.py).

``address``: ``auto`` (the cluster this node belongs to), ``host:port`` (a head node's GCS),
``ray://host:port`` (Ray Client), else ``$RAY_ADDRESS``, else a local Ray started for the run.
A ``host:port`` or ``ray://host:port`` that does not accept a TCP connection within
:data:`CONNECT_TIMEOUT_S` is one clear error: Ray itself retries such an address for minutes.
"""

from __future__ import annotations

import os
import socket

from harness.errors import HarnessError

CONNECT_TIMEOUT_S = 10.0


def check_reachable(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise HarnessError unless ``address`` (``host:port`` or ``ray://host:port``; ``[v6]:port``)
    accepts a TCP connection within ``timeout`` seconds. ``None``, ``auto``, ``local`` and anything
    without a port are left to Ray."""
    if not address or address in ("auto", "local"):
        return
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise HarnessError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def init(ray, address: str | None) -> None:
    """``ray.init`` for the harness (no dashboard, workers' logs not copied to the driver) at
    ``address``, else ``$RAY_ADDRESS``, else a local Ray; a Ray already initialised is kept."""
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    check_reachable(address)
    ray.init(address=address, log_to_driver=False, include_dashboard=False)
