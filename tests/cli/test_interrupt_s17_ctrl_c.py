"""Ctrl-C at any moment of a ``harness`` command exits 130 (128 + SIGINT, the shell's convention) with no
traceback (harness.cli.main), and SIGTERM 143; a cache write under way on a thread is finished first.

Found by killing ``harness run -r bm25`` after seeded random delays: SIGINT in its first ~0.7 s (of
1.2 s on SciFact, cached index) printed a 20-line ``KeyboardInterrupt`` traceback of whatever numpy or
pyarrow module was being imported, and the process died of the signal (status -2), because
``main`` imports the command's module (``_register``) before typer, which turns Ctrl-C into exit 130,
runs (SIGTERM there killed the process, status -15: its handler, harness.cli.sigterm_exits, was installed
after the import). Here the signal is sent at a chosen point, from inside that import, not by timing.
Expected (typer's rule for Ctrl-C during the command; 128 + 15 for SIGTERM, as during the command): status
130 / 143, no ``Traceback`` on stderr, nothing on stdout (the command never ran)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import importlib, os, signal, sys
    import harness.cli as cli

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, even where the test runner
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # was started with the signals ignored (a background job)

    target, signame, imported = sys.argv[1], sys.argv[2], importlib.import_module

    def import_module(name, *args):
        if name == target:
            os.kill(os.getpid(), getattr(signal, signame))  # while the command's module is being imported
        return imported(name, *args)

    importlib.import_module = import_module
    sys.argv = ["harness", "run", "--help"]
    cli.main()
""")


def _interrupted_while_importing(module: str, signame: str = "SIGINT") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, module, signame], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("signame, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_while_the_command_module_is_imported_exits_as_interrupted_without_a_traceback(signame, status):
    proc = _interrupted_while_importing("harness.cli.run", signame)
    assert "Traceback" not in proc.stderr, proc.stderr  # before the fix (SIGINT): the import's traceback
    assert proc.returncode == status, (proc.returncode, proc.stderr)  # before the fix: -2, -15 (killed)
    assert proc.stdout == ""  # the command did not run


def test_the_hook_is_harmless_when_it_does_not_fire():
    proc = _interrupted_while_importing("no.such.module")  # no signal: the command's help as usual
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout


# A command that leaves a cache write running on a thread (as BM25's index and the corpus's Arrow file are
# written, harness.background) and returns; the write sends the signal once the command has returned and the
# process is waiting for it (the main thread blocked in threading.py), then finishes its file.
BACKGROUND = textwrap.dedent("""
    import os, signal, sys, threading, time
    from pathlib import Path
    import harness.cli as cli
    import harness.cli.evaluate  # (main imports the command's module)
    from harness.atomic import atomic_open
    from harness.background import PendingWrites

    signal.signal(signal.SIGINT, signal.default_int_handler)  # (as in SCRIPT)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    folder, signame = sys.argv[1], sys.argv[2]
    pending, returned = PendingWrites(), threading.Event()

    def main_thread_waits():
        frame = sys._current_frames().get(threading.main_thread().ident)
        return frame is not None and frame.f_code.co_filename == threading.__file__

    def write():
        with atomic_open(os.path.join(folder, "entry.bin"), "wb") as handle:
            handle.write(b"first half, ")
            handle.flush()
            deadline = time.monotonic() + 60
            while not (returned.is_set() and main_thread_waits()) and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(os.getpid(), getattr(signal, signame))
            time.sleep(0.3)
            handle.write(b"second half")

    def command():
        pending.start(Path(folder) / "entry.bin", write, name="cache-write")
        print("results written", flush=True)
        returned.set()

    cli.app = command
    sys.argv = ["harness", "evaluate"]
    cli.main()
""")


@pytest.mark.parametrize("signame, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_while_the_exit_waits_for_a_cache_write_exits_as_interrupted_and_the_write_completes(
        tmp_path, signame, status):
    """Before the fix the interpreter's exit joined the write after main() had returned: Ctrl-C there
    printed "Exception ignored in: <module 'threading'> ... KeyboardInterrupt", exited 0 (an interrupted
    command reported as a success), and cut the write off (its temporary file left); SIGTERM killed the
    process (status -15), the write cut off too. Expected: 130 / 143, no traceback, the file whole."""
    proc = subprocess.run([sys.executable, "-c", BACKGROUND, str(tmp_path), signame],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert proc.stdout == "results written\n"
    assert os.listdir(tmp_path) == ["entry.bin"]  # no temporary file left: the write was finished
    assert (tmp_path / "entry.bin").read_bytes() == b"first half, second half"
