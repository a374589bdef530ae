"""Helpers for tests that run the harness in other processes and wait on them (bounded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def until(condition, what: str, timeout: float = 60.0) -> None:
    """Poll ``condition()`` every 50 ms until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def json_result(process: subprocess.Popen, timeout: float = 120.0) -> dict:
    """The JSON object on the last line of ``process``'s stdout, once it has exited 0."""
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0
    return json.loads(out.strip().splitlines()[-1])


def start_build(script: str, tmp_path: Path, name: str, hold: bool) -> subprocess.Popen:
    """``python -c script <tmp_path>/cache name hold|no`` with the repository importable: a build-lock test's
    process (its stderr in ``<tmp_path>/<name>.err``, its JSON result on stdout)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "cache"), name, "hold" if hold else "no"],
                            env=env, stdout=subprocess.PIPE, stderr=open(tmp_path / f"{name}.err", "w"), text=True)


# In the child: settled(n) is true once the main thread has handled n signals (Ctrl-C's handler here, as
# Python's raises KeyboardInterrupt; SIGTERM's: harness.cli's, counted by a wrapper where the child sets it)
# and has then been blocked in threading.py (a lock's wait) at one place for three looks 50 ms apart.
SETTLED = textwrap.dedent("""
    import signal, sys, threading, time

    handled = []

    def on_sigint(signum, frame):
        handled.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)  # (set even where the test runner was started with the signals
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # ignored, as a background job)

    def main_stack():
        frame, stack = sys._current_frames().get(threading.main_thread().ident), []
        while frame is not None:
            stack.append((frame.f_code.co_filename, frame.f_lineno))
            frame = frame.f_back
        return stack

    def settled(n, deadline):
        while time.monotonic() < deadline:
            looks = []
            for _ in range(3):
                looks.append(main_stack())
                time.sleep(0.05)
            if (len(handled) == n and looks[0] and looks[0][0][0] == threading.__file__
                    and looks.count(looks[0]) == 3):
                return True
        return False
""")
