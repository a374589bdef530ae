"""harness/raycluster.py, second review: ``--address auto`` (or ``$RAY_ADDRESS=auto``) names the
cluster last started on this machine with ``ray start`` (Ray's ``ray_current_cluster`` file, removed
only by ``ray stop``) or ``$RAY_ADDRESS``; a head that died without ``ray stop`` left an address
nothing listens on, and ``harness bench --executor ray --address auto`` then waited in Ray's
retries (measured: still waiting after 100 s, GCS "Failed to connect ... within 5 seconds" lines).
Expected: the one line an unreachable host:port gets, at once, before ray.init."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from tests.test_raycluster import _fake_ray, closed_port


@pytest.fixture
def stale_cluster(tmp_path, monkeypatch):
    """A ray_current_cluster file (Ray's temp dir moved to tmp_path with $RAY_TMPDIR) naming a port
    nothing listens on, as a head killed without `ray stop` leaves it."""
    pytest.importorskip("ray")
    from harness import raycluster

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(raycluster, "_started_here", False)
    address = f"127.0.0.1:{closed_port()}"
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(address)
    return address


def test_auto_naming_a_dead_cluster_is_one_line_at_once(stale_cluster):
    from harness import raycluster

    calls, FakeRay = _fake_ray()
    with pytest.raises(HarnessError) as err:
        raycluster.init(FakeRay, "auto")
    assert str(err.value) == (
        f"cannot reach the Ray cluster at {stale_cluster}: Connection refused (the address auto names "
        "$RAY_ADDRESS, else the cluster last started on this machine with `ray start`; `ray stop` forgets it)")
    assert calls == []  # ray.init never tried it


def test_auto_takes_ray_address_first_as_ray_does(stale_cluster, monkeypatch, tmp_path):
    """ray.init(address="auto") connects to $RAY_ADDRESS when it is set (ray/_private/worker.py)."""
    from harness import raycluster

    calls, FakeRay = _fake_ray()
    (tmp_path / "ray" / "ray_current_cluster").unlink()
    dead = f"127.0.0.1:{closed_port()}"
    monkeypatch.setenv("RAY_ADDRESS", dead)
    with pytest.raises(HarnessError, match=f"cannot reach the Ray cluster at {dead}: Connection refused"):
        raycluster.init(FakeRay, "auto")
    monkeypatch.delenv("RAY_ADDRESS")
    # no file, no variable: refused (Ray's own search joined any Ray running here, another process's own
    # among them; tests/test_ray_auto_s34.py)
    with pytest.raises(HarnessError, match="there is neither"):
        raycluster.init(FakeRay, "auto")
    assert calls == []
