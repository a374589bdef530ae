"""Helpers for tests that run the harness in other processes and wait on them (bounded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
