"""Starting or joining Ray (an optional extra): one place for the benchmark's Ray executor
(harness/bench/executors.py) and the dense retriever's Ray encoder (retrievers/dense/distributed.py).

``address``: ``auto`` (the cluster this node belongs to), ``host:port`` (a head node's GCS),
``ray://host:port`` (Ray Client), else ``$RAY_ADDRESS``, else a local Ray started for the run.
A ``host:port`` or ``ray://host:port`` that does not accept a TCP connection within
:data:`CONNECT_TIMEOUT_S` is one clear error: Ray itself retries such an address for minutes. So is
the address ``auto`` stands for, when it names one (``$RAY_ADDRESS``, else the cluster last started
on this machine with ``ray start``, remembered until ``ray stop``: a head that died without it).
"""

from __future__ import annotations

import os
import signal
import socket
import threading

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


_started_here = False  # whether init() started the Ray it is connected to (a local one, fixed in size)


def init(ray, address: str | None) -> None:
    """``ray.init`` for the harness (no dashboard, workers' logs not copied to the driver) at
    ``address``, else ``$RAY_ADDRESS``, else a local Ray; a Ray already initialised is kept."""
    global _started_here
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    check_reachable(address)
    if address == "auto":  # a cluster killed without `ray stop` leaves its address behind: Ray retries it for minutes
        current = _auto_target()
        if current is None:  # (Ray would join any Ray it finds running here: another process's own, dying with it)
            raise HarnessError("the address auto names $RAY_ADDRESS, else the cluster last started on this machine "
                               "with `ray start`, and there is neither: start one (`ray start --head`) or give "
                               "the cluster's address")
        if current != "auto":
            try:
                check_reachable(current)
            except HarnessError as exc:
                raise HarnessError(f"{exc} (the address auto names $RAY_ADDRESS, else the cluster last "
                                   "started on this machine with `ray start`; `ray stop` forgets it)") from None
    # "local": a new local Ray, as documented; ray.init(address=None) would join the cluster last started
    # with `ray start` on this machine instead (its /tmp/ray/ray_current_cluster), which may grow
    handler = signal.getsignal(signal.SIGTERM)
    ray.init(address=address or "local", log_to_driver=False, include_dashboard=False)
    if callable(handler) and threading.current_thread() is threading.main_thread():
        # Ray's core worker installs its own handler of SIGTERM under Python's (absl's failure handler:
        # it prints a stack and aborts, exit 134, none of the harness's cleanup run); the harness's is put back
        signal.signal(signal.SIGTERM, handler)
    _started_here = address in (None, "local")  # ("local" given, as Ray spells it: also a new local Ray)


def _auto_target() -> str | None:
    """What ``auto`` names: ``$RAY_ADDRESS``, else the cluster last started here with ``ray start`` (its
    ``ray_current_cluster`` file, which only ``ray stop`` removes); None when neither. (``ray.init`` would then
    join any Ray it finds running on the machine, a Ray another process started for itself among them: its
    CPUs held by that process's work, and gone when it ends.) ``"auto"`` where this Ray's lookup cannot be read
    (another version: left to Ray)."""
    env = os.environ.get("RAY_ADDRESS")
    if env and env != "auto":
        return env
    try:
        from ray._private.utils import read_ray_address  # (Ray's own lookup; private, hence the guard)

        return read_ray_address() or None
    except Exception:  # noqa: BLE001 - another Ray version: leave "auto" to Ray
        return "auto"


def started_here() -> bool:
    """Whether the Ray in use is the local one :func:`init` started: its resources never grow, where
    a cluster joined at an address may gain nodes (an autoscaler's)."""
    return _started_here


def shortfall(request: dict, cluster: dict) -> str | None:
    """What a task's ``request`` (``num_cpus``, ``num_gpus``, ``resources``: Ray's task options)
    asks for beyond the whole of ``cluster`` (``ray.cluster_resources()``), as ``1 GPU (the cluster
    has 0)``; None when the cluster could run it. Ray leaves such a task pending, without a word
    while its logs are not copied to the driver, until a node that has it joins."""
    wanted = {"CPU": request.get("num_cpus") or 0, "GPU": request.get("num_gpus") or 0,
              **(request.get("resources") or {})}
    short = [f"{amount:g} {name} (the cluster has {cluster.get(name, 0):g})"
             for name, amount in wanted.items() if amount > cluster.get(name, 0)]
    return ", ".join(short) or None
