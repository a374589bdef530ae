"""Helpers for tests that run the harness in other processes and wait on them (bounded)."""

from __future__ import annotations

import json
import subprocess
import time


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
