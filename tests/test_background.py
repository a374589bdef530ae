"""harness/background.py: pending writer threads, waited for by key."""

from __future__ import annotations

import threading
from pathlib import Path

from harness.background import PendingWrites


def test_wait_joins_the_writer_of_its_key_only():
    pending, release, done = PendingWrites(), threading.Event(), []
    thread = pending.start(Path("a"), lambda: (release.wait(30), done.append("a")), name="writer-a")
    assert not thread.daemon  # the interpreter joins it at exit: no process ends mid-write
    pending.wait(Path("b"))  # nothing pending under another key: returns at once
    assert done == [] and thread.is_alive()
    threading.Timer(0.05, release.set).start()
    pending.wait(Path("a"))
    assert done == ["a"] and not thread.is_alive() and pending._threads == {}


def test_a_failing_task_is_unregistered_and_wait_all_joins_every_writer():
    pending, finished = PendingWrites(), []

    def fail():
        raise OSError("disk full")

    def ok():
        finished.append(1)

    original = threading.excepthook
    threading.excepthook = lambda args: finished.append(type(args.exc_value).__name__)
    try:
        pending.start(Path("x"), fail, name="writer-x")
        pending.start(Path("y"), ok, name="writer-y")
        pending.wait()
    finally:
        threading.excepthook = original
    assert sorted(map(str, finished)) == ["1", "OSError"] and pending._threads == {}
