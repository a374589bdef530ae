"""The ``harness`` command line (typer). Each command lives in its own module."""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

import typer

from harness.errors import HarnessError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark search: run retrievers on BEIR datasets, evaluate runs, compare and gate.")


# Command name -> its module (harness/cli/<name>.py adds the command to ``app`` when imported), in the
# order ``--help`` lists them.
COMMANDS = ("datasets", "evaluate", "run", "check", "compare", "bench", "serve", "report", "fuse", "rerank",
            "cache")


def _print_version(value: bool) -> None:
    if value:
        from harness import __version__

        typer.echo(f"retrieval-harness {__version__}")
        raise typer.Exit()


@app.callback()
def _group(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                        help="Print the version and exit.")) -> None:
    """(Keeps ``harness`` a group of commands when just one command module is imported.)"""


def _register(argv: list[str] | None = None) -> None:
    """Import the command modules: only the invoked one when ``argv`` names a command (a process that
    runs one command does not import the others' dependencies), else all (``--help``, mistakes)."""
    import importlib

    wanted = [argv[0]] if argv and argv[0] in COMMANDS else COMMANDS
    for name in wanted:
        importlib.import_module(f"harness.cli.{name}")


# OpenBLAS, numpy's BLAS, starts its threads when numpy is imported, and each spins for 2^28 cycles
# (~0.1 s of a core) before it sleeps: CPU a short command competes with on two cores. 2^4 cycles
# puts them to sleep at once; a BLAS call (dense search's matrix products) wakes them. A value the
# user set is kept. (Before the command modules are imported: they import numpy.)
BLAS_THREAD_TIMEOUT = ("OPENBLAS_THREAD_TIMEOUT", "4")


def main() -> None:
    """Entry point: user mistakes print one line and exit 2; usage errors are click's (exit 2). A file
    that cannot be read or written (an output folder under a file, a read-only place, a full disk) is
    named on one line, exit 2 (``check`` keeps 1 for a regression). SIGTERM ends the command as an
    exception would, exit 143 (:func:`sigterm_exits`). Ctrl-C (SIGINT) exits 130 with no traceback:
    typer turns it into that inside the command, and so does this outside it: while the command's
    modules are imported (half a second or more of a run's start: numpy, pyarrow), where it printed a
    traceback of the import under way (and SIGTERM killed the process, status -15), and while the
    command's background cache writes finish (:func:`_wait_for_cache_writes`)."""
    os.environ.setdefault(*BLAS_THREAD_TIMEOUT)
    show_own_deprecations()
    try:
        with sigterm_exits():
            _register(sys.argv[1:])
            try:
                app()
            except (HarnessError, ValueError) as exc:  # ValueError: option values refused by the core
                print(f"error: {exc}", file=sys.stderr)
                sys.exit(2)
            except OSError as exc:
                print(f"error: {os_error_line(exc)}", file=sys.stderr)
                sys.exit(2)
            finally:
                _wait_for_cache_writes()
    except KeyboardInterrupt:
        sys.exit(130)  # 128 + SIGINT, as typer exits on Ctrl-C during the command


def _wait_for_cache_writes() -> None:
    """Wait for the cache writes the command left running on threads (harness.background: a BM25
    index, a corpus's Arrow file), here rather than in the interpreter's exit, which joins them after
    ``main`` has returned: there Ctrl-C printed a ``KeyboardInterrupt`` traceback ("Exception ignored
    in: <module 'threading'>"), the exit status stayed 0, and the write was cut off midway; SIGTERM
    (its handler gone) killed the process. Here either ends the wait as it ends the command (exit 130,
    143), and the interpreter's exit then still lets the write finish."""
    from harness.background import wait_all

    wait_all()


def show_own_deprecations() -> None:
    """The project's own DeprecationWarnings (a former name the user typed: ``-p backend=bm25s``) are
    for the user of the command: printed once each as ``warning: ... (deprecated)``, where Python's
    default filters hide a DeprecationWarning outside ``__main__``. Other packages' stay hidden."""
    import warnings

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if own_deprecation(category, filename):
            print(f"warning: {message} (deprecated)", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("default", category=DeprecationWarning, module=r"(harness|retrievers)(\.|$)")


def own_deprecation(category: type, filename: str) -> bool:
    """Whether a warning is one of the project's own DeprecationWarnings (issued from a file of its
    packages, harness and retrievers, installed side by side)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["harness"].__file__)))
    own = tuple(os.path.join(root, package, "") for package in ("harness", "retrievers"))
    return issubclass(category, DeprecationWarning) and os.path.abspath(filename).startswith(own)


def _exit_on_sigterm(signum: int, frame) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def sigterm_exits() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``SystemExit(143)`` in the main thread, so the process
    unwinds as on any exception: ``finally`` blocks and context managers run (an atomic writer removes
    its ``.<name>.<pid>-<host>.<random>.tmp`` file, :mod:`harness.atomic`), non-daemon threads (background
    cache writes) finish, and the exit status is 143 (128 + 15, what a shell reports for a process
    SIGTERM ended). Python's default, kept outside the block (and by the library, which installs no
    handler), ends the process at once, cleanup undone. Only in the main thread (signal handlers run
    there) and only where SIGTERM has its default action (one the parent set to ignore stays ignored);
    the previous handler is put back at the end of the block. SIGINT is left as it is."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def os_error_line(exc: OSError) -> str:
    """``<file>: <reason>`` for an OSError (the file the system call named, the system's reason). Of a
    rename's two files the target is named (an atomic write renames its temporary file onto the
    output: ``out.json: Is a directory``, not the temporary file), unless the source is missing. A
    temporary file that could not be created is named as the output it was for (``/sys/x.json:
    Permission denied``, not ``/sys/.x.json.<pid>-<host>.<random>.tmp``, a name the user never gave)."""
    if exc.filename is None or exc.strerror is None:
        return str(exc)
    if exc.filename2 is not None and exc.errno != errno.ENOENT:
        return f"{_output_of(exc.filename2)}: {exc.strerror}"
    return f"{_output_of(exc.filename)}: {exc.strerror}"


def _output_of(filename) -> str:
    """The output that ``filename`` is this process's temporary file for (``harness.atomic``'s
    ``.<name>.<pid>-<host>.<random>.tmp`` beside it); any other name as it is."""
    from harness.atomic import temporary_parts, writer_tag

    folder, base = os.path.split(os.fsdecode(filename))
    parts = temporary_parts(base)
    if parts is not None and parts[0] and parts[1] == writer_tag():
        return os.path.join(folder, parts[0])
    return os.fsdecode(filename)
