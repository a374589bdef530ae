"""The ``harness`` console script's entry point (``[project.scripts]`` in pyproject.toml; ``python -m harness``).

It takes over Ctrl-C and SIGTERM before the command line is imported, then imports it and runs it
(:func:`harness.cli.main`, which handles both from there on). The import is most of a short command's
start-up (typer and click, ~0.1 s; then the command's own modules, numpy, pyarrow: more), and it ran at
the top of the console script, outside any handler: Ctrl-C there printed a ``KeyboardInterrupt``
traceback of whatever module was being imported, SIGTERM killed the process (status -15). Here either
exits as during the command: 130 (128 + SIGINT) with nothing printed, 143 (128 + SIGTERM).

Only the standard library's ``gc``, ``signal`` and ``sys`` are imported first (the command line imports both
anyway), so that the handling starts at once and start-up is no slower. What runs before this module (the
interpreter's start, ``site`` and the installed packages' ``.pth`` files) is not covered: Ctrl-C there
still prints Python's traceback (before the interpreter installs its own SIGINT handler: none, and the
process ends of the signal).
"""

from __future__ import annotations

import gc
import signal
import sys


# The signals exit_on_sigterm has turned into SystemExit: Ray's ray.wait and ray.get catch the handler's
# SystemExit(143) and raise SystemExit(1) instead (a Ray bench sent SIGTERM exited 1, as a failed cell does);
# harness.cli.interruption_status reads the status from here.
SIGNALLED: list[int] = []


def exit_on_sigterm(signum: int, frame) -> None:
    """SIGTERM's handler in a ``harness`` command: ``SystemExit(143)`` (128 + 15) in the main thread, so
    that the process unwinds as on any exception (``harness.cli.sigterm_exits``)."""
    SIGNALLED.append(signum)
    raise SystemExit(128 + signum)


def main() -> None:
    """Run the ``harness`` command line; Ctrl-C or SIGTERM while it is imported exits 130 / 143 (SIGTERM
    only where it has its default action: one the parent set to ignore stays ignored, as in
    ``harness.cli.sigterm_exits``, which finds this handler installed and keeps it)."""
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_DFL:
        try:
            signal.signal(signal.SIGTERM, exit_on_sigterm)
        except ValueError:  # (not the main thread: signal handlers can be set only there)
            previous = None
    else:
        previous = None
    try:
        from harness.allocator import keep_freed_memory

        keep_freed_memory()  # (first: before the command's modules allocate)
        from harness.cli import main as run_command_line

        run_command_line()
    except KeyboardInterrupt:
        sys.exit(130)  # 128 + SIGINT, as harness.cli.main and typer exit on Ctrl-C
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        # The process ends next: the interpreter's exit collects every object it holds (~36k after a
        # run: numpy, pyarrow, typer), ~30 ms of a 0.65 s cached 1M-document run, for nothing (the
        # memory goes back with the process). Frozen objects are not collected; every file the command
        # wrote is closed already, and atexit hooks (logging, weakref finalizers) still run.
        gc.freeze()
