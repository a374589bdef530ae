"""``--address auto`` with neither ``$RAY_ADDRESS`` nor a cluster started here with ``ray start`` is refused.

``ray.init(address="auto")`` then joins any Ray it finds running on the machine: a probe's ``harness bench
--executor ray --address auto`` joined the private Ray another process's ``harness run -r dense -p
encoder=ray`` had started for itself, and waited behind its actors without a word (or ran its cells on a
cluster that died with that process). docs/ray.md: auto names $RAY_ADDRESS, else the cluster last started
with ``ray start``.
"""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from tests.test_raycluster import _fake_ray


def test_auto_with_nothing_it_names_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    from harness import raycluster

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # (no ray_current_cluster file there)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    calls, FakeRay = _fake_ray()
    with pytest.raises(HarnessError) as err:
        raycluster.init(FakeRay, "auto")
    assert str(err.value) == ("the address auto names $RAY_ADDRESS, else the cluster last started on this machine "
                              "with `ray start`, and there is neither: start one (`ray start --head`) or give the "
                              "cluster's address")
    assert calls == []  # ray.init never ran
    monkeypatch.setenv("RAY_ADDRESS", "auto")  # ($RAY_ADDRESS=auto names nothing either)
    with pytest.raises(HarnessError, match="there is neither"):
        raycluster.init(FakeRay, None)


def test_bench_with_address_auto_and_no_cluster_exits_2(tmp_path):
    """The refusal end to end: its line and exit status, nothing written. (Where no Ray runs to be joined, as
    here, the old code exited 2 too, with Ray's own "Could not find any running Ray instance"; the test above
    is the one the old code fails. A process of its own: in this one a Ray may be initialised already.)"""
    pytest.importorskip("ray")
    import os
    import subprocess
    import sys

    env = {**os.environ, "RAY_TMPDIR": str(tmp_path)}
    env.pop("RAY_ADDRESS", None)
    config = tmp_path / "b.toml"
    config.write_text('name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n')
    out = subprocess.run([sys.executable, "-m", "harness", "bench", str(config), "-o", str(tmp_path / "out"),
                          "--executor", "ray", "--address", "auto"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: the address auto names $RAY_ADDRESS, else")
    assert not (tmp_path / "out" / "b").exists()
