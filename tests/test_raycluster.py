"""harness/raycluster.py: an unreachable Ray address is one clear error at once (Ray itself retries it
for minutes: a review saw `harness bench --executor ray --address host:port` wait over 2 minutes)."""

from __future__ import annotations

import socket

import pytest

from harness.errors import HarnessError
from harness.raycluster import check_reachable


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # (closed when the with block ends: nothing listens there)


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_nothing_listens_on_is_refused_at_once(scheme):
    address = f"{scheme}127.0.0.1:{closed_port()}"
    with pytest.raises(HarnessError) as err:  # (refused at once: no retry, unlike ray.init)
        check_reachable(address)
    assert str(err.value) == f"cannot reach the Ray cluster at {address}: Connection refused"
    with pytest.raises(HarnessError, match=r"cannot reach the Ray cluster at \[::1\]:"):  # IPv6 brackets
        check_reachable(f"[::1]:{closed_port()}")


def test_a_listening_address_passes_and_others_are_left_to_ray():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_reachable(f"127.0.0.1:{port}")
        check_reachable(f"ray://127.0.0.1:{port}")
    for address in (None, "", "auto", "local", "head-node"):  # no port: Ray's own rules
        check_reachable(address)


def test_bench_on_an_unreachable_ray_address_is_one_line(tmp_path):
    """End to end (a fresh process: the test session's own Ray would be kept): `harness bench CONFIG
    --executor ray --address 127.0.0.1:<closed>` exits 2 with the one line, before any cell runs."""
    pytest.importorskip("ray")
    from tests.bench.test_ray_executor import write_config
    from tests.cli.test_cli import harness

    address = f"127.0.0.1:{closed_port()}"
    result = harness("bench", str(write_config(tmp_path)), "--executor", "ray", "--address", address, "-q",
                     cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: cannot reach the Ray cluster at {address}: Connection refused")
    assert not (tmp_path / "results").exists()  # no cell ran


def test_without_an_address_a_new_local_ray_is_started_not_the_last_one_joined(monkeypatch):
    # docs/ray.md: no address and no $RAY_ADDRESS -> "a local Ray started for the run". ray.init(address=None)
    # joins the cluster last started with `ray start` on the machine instead, which may gain GPU nodes:
    # started_here() (a cell asking for more than the cluster has fails at once) would then be wrong.
    from harness import raycluster

    calls, FakeRay = _fake_ray()

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(raycluster, "_started_here", False)
    raycluster.init(FakeRay, None)
    assert calls == ["local"] and raycluster.started_here()
    monkeypatch.setattr(raycluster, "_auto_target", lambda: "auto")  # (a Ray whose own lookup is left to it)
    raycluster.init(FakeRay, "auto")
    assert calls == ["local", "auto"] and not raycluster.started_here()


def test_address_local_is_a_local_ray_started_here(monkeypatch):
    # Ray's own spelling of "a new local Ray", as --address local or RAY_ADDRESS=local: ray.init(address="local")
    # starts one here, fixed in size, so started_here() must say so (it said False: a cell asking for a GPU
    # the local Ray lacks was only warned about, and then waited in Ray's queue for good; docs/ray.md).
    from harness import raycluster

    calls, FakeRay = _fake_ray()

    monkeypatch.setattr(raycluster, "_started_here", False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    raycluster.init(FakeRay, "local")
    assert calls == ["local"] and raycluster.started_here()
    monkeypatch.setattr(raycluster, "_started_here", False)
    monkeypatch.setenv("RAY_ADDRESS", "local")
    raycluster.init(FakeRay, None)
    assert calls == ["local", "local"] and raycluster.started_here()


def _fake_ray():
    """(addresses ray.init was called with, a stand-in for the ray module that records them)."""
    calls = []

    class FakeRay:
        @staticmethod
        def is_initialized():
            return False

        @staticmethod
        def init(**kwargs):
            calls.append(kwargs["address"])

    return calls, FakeRay
