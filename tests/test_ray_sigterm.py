"""SIGTERM after a local Ray was started by the harness (``harness.raycluster.init``: ``encoder='ray'``).

Ray's core worker installs its own SIGTERM handler (absl's failure signal handler) under Python's when
``ray.init`` runs: a ``harness run -r dense -p encoder=ray`` sent SIGTERM printed a C++ stack trace and
aborted, exit 134, with none of the harness's cleanup (tests/cli/test_sigterm.py: exit 143, temporary
files removed). ``init`` now puts the harness's handler back after ``ray.init``; the process exits 143
as any other harness command does."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

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
        with atomic_open(sys.argv[1] + "/out.json") as handle:
            handle.write("partial")
            handle.flush()
            print("ready", flush=True)
            time.sleep(120)

    cli.app = command
    sys.argv = ["harness", "evaluate"]
    cli.main()
""")


def sigterm_when_ready(script: str, folder) -> tuple[int, str]:
    """Run ``script`` (argv[1]: ``folder``) until it prints ``ready``, send it SIGTERM: (exit status, stderr)."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(folder)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=90)
        return code, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()


def test_sigterm_after_ray_init_exits_143_and_cleans_up(tmp_path):
    code, stderr = sigterm_when_ready(SCRIPT, tmp_path)
    assert code == 143, stderr[-2000:]  # 128 + SIGTERM (was 134: SIGABRT from Ray's handler)
    assert "SIGTERM received" not in stderr  # (Ray's handler's stack dump)
    assert list(tmp_path.iterdir()) == []  # the atomic writer's temporary file removed
