"""SIGTERM while the harness waits on Ray (``ray.wait`` / ``ray.get``: a bench on ``--executor ray``) exits 143.

Ray's ``ray.wait`` catches the SystemExit(143) the harness's SIGTERM handler raises and raises SystemExit(1)
instead: a Ray bench sent SIGTERM exited 1 with nothing printed, as a bench whose cell failed does
(docs/ray.md: 143). The handler now records the signal, and the command's exit status is 143 whatever
status Ray's re-raise carries; the cleanup runs as before.
"""

from __future__ import annotations

import signal
import textwrap

import pytest

from tests.test_ray_sigterm import sigterm_when_ready

pytest.importorskip("ray", reason="ray is not installed")

SCRIPT = textwrap.dedent("""
    import sys, time
    import ray
    import harness.cli as cli
    import harness.cli.evaluate  # (main imports the command's module, which adds it to cli.app)
    from harness import raycluster
    from harness.atomic import atomic_open

    def command():
        raycluster.init(ray, None)

        @ray.remote(num_cpus=0)
        def sleeper():
            time.sleep(120)

        ref = sleeper.remote()
        with atomic_open(sys.argv[1] + "/out.json") as handle:
            handle.write("partial")
            handle.flush()
            print("ready", flush=True)
            ray.wait([ref], num_returns=1)  # (a Ray bench waits on its cells' tasks here)

    cli.app = command
    sys.argv = ["harness", "evaluate"]
    cli.main()
""")


def test_sigterm_during_ray_wait_exits_143_and_cleans_up(tmp_path):
    code, stderr = sigterm_when_ready(SCRIPT, tmp_path)
    assert code == 143, stderr[-2000:]  # (was 1: Ray's re-raise of the handler's exit)
    assert list(tmp_path.iterdir()) == []  # the atomic writer's temporary file removed

def test_a_later_command_in_the_same_process_is_not_taken_for_a_sigterm(harness_cli, monkeypatch):
    """A command run in-process after one that SIGTERM ended (the handler recorded it) exits with its own
    status: the record is cleared as each command starts (it made every later command's exit 0 a 143)."""
    from harness.entry import SIGNALLED, exit_on_sigterm

    with pytest.raises(SystemExit):
        exit_on_sigterm(signal.SIGTERM, None)
    assert SIGNALLED == [signal.SIGTERM]
    out = harness_cli("datasets", "list")
    assert out.returncode == 0 and "scifact" in out.stdout
    assert SIGNALLED == []
