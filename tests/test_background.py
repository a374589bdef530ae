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


def test_a_write_waited_for_when_sigterm_comes_still_finishes(tmp_path):
    """SIGTERM in a harness command raises SystemExit(143) in the main thread (harness.cli); arriving
    while the command waits for a background write, it interrupted Thread.join(), which then marked
    the still-running writer as stopped (CPython 3.11), so the interpreter's exit did not wait for it
    and the write never finished. Expected: exit 143 and the write done (the file holds "done")."""
    import subprocess
    import sys
    import textwrap

    from tests.processes import SETTLED

    # The write sends SIGTERM once the command waits for it (the main thread settled in threading.py: no timer
    # decides it), then ends once the signal is handled and the process waits for it again (as its exit must).
    script = SETTLED + textwrap.dedent("""
        import os
        from pathlib import Path
        import harness.cli as cli
        import harness.cli.evaluate  # (main imports the command's module, which adds it to cli.app)
        from harness.background import PendingWrites

        out, exit_on_sigterm = Path(sys.argv[1]), cli._exit_on_sigterm

        def on_sigterm(signum, frame):  # (installed by harness.cli.sigterm_exits)
            handled.append(signum)
            exit_on_sigterm(signum, frame)

        cli._exit_on_sigterm = on_sigterm

        def write():
            deadline = time.monotonic() + 60
            if settled(0, deadline):
                os.kill(os.getpid(), signal.SIGTERM)
                settled(1, deadline)
            out.write_text("done")

        def command():
            pending = PendingWrites()
            pending.start(out, write, "writer")
            pending.wait(out)

        cli.app = command
        sys.argv = ["harness", "evaluate"]
        cli.main()
    """)
    out = tmp_path / "out.txt"
    proc = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert out.read_text() == "done"
