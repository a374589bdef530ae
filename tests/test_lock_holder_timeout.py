"""Build locks name their holder, and ``$HARNESS_LOCK_TIMEOUT`` bounds the wait (harness/atomic.py).

A process that missed a cache entry another process was building waited for it with one line, "another
process is building ...; waiting for it", and nothing more: a holder that hung (a stopped job sharing the
cache) kept it waiting forever, with no way to tell which process to look at. Now the holder writes
``process <pid> on <host> since <UTC time>`` into the lock file, a waiter names it in a warning, and with
``HARNESS_LOCK_TIMEOUT`` set a lock still held after that many seconds is one error line naming the lock file
and its holder (exit 2 from the command line).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.atomic import LOCK_TIMEOUT_ENV, build_lock, lock_timeout
from harness.errors import HarnessError

REPO = Path(__file__).resolve().parents[1]

HOLD = """
import sys, time
from harness.atomic import build_lock
release = build_lock(sys.argv[1])
print("held", flush=True)
time.sleep(float(sys.argv[2]))
release()
print("released", flush=True)
time.sleep(30)
"""


def holding(path: Path, seconds: float) -> subprocess.Popen:
    """A process holding the build lock on ``path`` for ``seconds`` (it says "held" once it has it)."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_waiter_past_the_timeout_gets_one_line_naming_the_holder(tmp_path, monkeypatch, caplog):
    lock = tmp_path / "locks" / "entry.lock"
    holder = holding(lock, 60)
    try:
        monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.5")
        waited = []
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="harness"), pytest.raises(HarnessError) as err:
            build_lock(lock, on_wait=lambda: waited.append(time.monotonic()))
        spent = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    who = f"process {holder.pid} on {socket.gethostname()} since 20"
    message = str(err.value)
    assert message.startswith(f"{lock}: still held by {who}") and "\n" not in message
    assert f"after 0.5 s ({LOCK_TIMEOUT_ENV})" in message
    assert 0.5 <= spent < 10 and len(waited) == 1
    assert [r.getMessage() for r in caplog.records if "is held by" in r.getMessage()] == [
        f"{lock} is held by {lock.read_text().strip()}"]
    assert lock.read_text().startswith(who)  # (the killed holder's record: the kernel released its lock)


def test_without_a_timeout_the_waiter_takes_the_lock_when_it_is_released(tmp_path, monkeypatch):
    monkeypatch.delenv(LOCK_TIMEOUT_ENV, raising=False)
    lock = tmp_path / "entry.lock"
    holder = holding(lock, 1.0)
    try:
        started = time.monotonic()
        release = build_lock(lock)
        spent = time.monotonic() - started
        assert holder.stdout.readline().strip() == "released"
    finally:
        holder.kill()
        holder.wait()
    assert 0.5 < spent < 20
    assert lock.read_text().startswith(f"process {os.getpid()} on {socket.gethostname()} since 20")
    release()
    assert lock.read_text() == ""  # (released: no record left to be read as a later holder's)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "inf", "nan"])
def test_a_timeout_that_is_no_positive_number_is_refused(monkeypatch, value):
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, value)
    with pytest.raises(HarnessError, match=rf"^{LOCK_TIMEOUT_ENV}='{value}': give the seconds"):
        lock_timeout()
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, " 2.5 ")
    assert lock_timeout() == 2.5


def test_harness_run_behind_a_hung_bm25_build_stops_after_the_timeout(tmp_path):
    """A BM25 index build lock held by a process that never finishes (here one that holds it and sleeps):
    ``HARNESS_LOCK_TIMEOUT=1 harness run`` exits 2 with one line naming the lock and the holder."""
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    run = [sys.executable, "-m", "harness", "run", "-d", "scifact", "-r", "bm25", "-o", str(tmp_path / "res"), "-q"]
    first = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    entries = [p for p in (tmp_path / "cache" / "bm25").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(entries) == 1
    shutil.rmtree(entries[0])  # (the next run misses the entry and must build it)
    lock = tmp_path / "cache" / ".locks" / f"{entries[0].name}.lock"  # (retrievers/bm25/cache.py build_lock)
    holder = holding(lock, 60)
    try:
        proc = subprocess.run(run, capture_output=True, text=True, env={**env, LOCK_TIMEOUT_ENV: "1"}, cwd=tmp_path,
                              timeout=120)
    finally:
        holder.kill()
        holder.wait()
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert lines[-1].startswith(f"error: {lock}: still held by process {holder.pid} on ") and "after 1 s" in lines[-1]


def test_a_file_lock_records_its_holder_for_the_block_and_clears_it(tmp_path, monkeypatch):
    """file_lock (a download's .part, a result folder's writes) records its holder as build_lock does, for the
    block only: a result folder's .lock is empty again once its files are written."""
    from harness.atomic import file_lock

    monkeypatch.delenv(LOCK_TIMEOUT_ENV, raising=False)
    lock = tmp_path / "results" / ".lock"
    with file_lock(lock):
        assert lock.read_text().startswith(f"process {os.getpid()} on {socket.gethostname()} since 20")
    assert lock.read_text() == ""
