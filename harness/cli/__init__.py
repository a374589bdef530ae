"""The ``harness`` command line (typer). Each command lives in its own module."""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, NoReturn

import typer

from harness.entry import SIGNALLED, exit_on_sigterm
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
    traceback of the import under way (and SIGTERM killed the process, status -15; the console script
    covers the import of this module too: :mod:`harness.entry`), and while the command's background
    cache writes finish (:func:`_wait_for_cache_writes`: a second interruption abandons them)."""
    SIGNALLED.clear()  # (a command run again in this process: an earlier one's SIGTERM is not this one's)
    os.environ.setdefault(*BLAS_THREAD_TIMEOUT)
    show_own_deprecations()
    show_own_log_warnings()
    try:
        with sigterm_exits():
            _register(sys.argv[1:])
            interrupted = None
            try:
                app()
            except (HarnessError, ValueError) as exc:  # ValueError: option values refused by the core
                print(f"error: {exc}", file=sys.stderr)
                sys.exit(2)
            except OSError as exc:
                print(f"error: {os_error_line(exc)}", file=sys.stderr)
                sys.exit(2)
            except BaseException as exc:  # (typer ends even a finished command with SystemExit(0))
                interrupted = interruption_status(exc)
                if isinstance(exc, SystemExit) and interrupted is not None and exc.code != interrupted:
                    raise SystemExit(interrupted) from None  # (SIGTERM's 143, which Ray made 1)
                raise
            finally:
                _wait_for_cache_writes(interrupted)
    except KeyboardInterrupt:
        sys.exit(130)  # 128 + SIGINT, as typer exits on Ctrl-C during the command


# Said once, when an interruption (Ctrl-C, SIGTERM) finds a cache write under way: the process does not end
# at once, and the next interruption ends it.
FINISHING_CACHE_WRITE = ("interrupted: finishing the cache write under way "
                         "(Ctrl-C again abandons it; the next run writes it again)")


def interruption_status(exc: BaseException) -> int | None:
    """The exit status that ``exc`` ends the command with when it is an interruption: Ctrl-C's
    ``KeyboardInterrupt``, 130 (typer's ``SystemExit(130)`` for it in the command), SIGTERM's
    ``SystemExit(143)`` (:func:`sigterm_exits`); None for anything else."""
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, SystemExit) and exc.code in (130, 143):
        return exc.code
    if isinstance(exc, SystemExit) and SIGNALLED:  # (Ray's ray.wait / ray.get re-raise SIGTERM's exit as status 1)
        return 128 + SIGNALLED[-1]
    return None


def _wait_for_cache_writes(interrupted: int | None = None) -> None:
    """Wait for the cache writes the command left running on threads (harness.background: a BM25
    index, a corpus's Arrow file), here rather than in the interpreter's exit, which joins them after
    ``main`` has returned: there Ctrl-C printed a ``KeyboardInterrupt`` traceback ("Exception ignored
    in: <module 'threading'>"), the exit status stayed 0, and the write was cut off midway; SIGTERM
    (its handler gone) killed the process.

    ``interrupted``: the command's exit status when an interruption ended it (130, 143), else None.
    The first interruption (that one, or one during this wait) lets the write finish, so that the next
    run finds the entry, and says so on one line (:data:`FINISHING_CACHE_WRITE`) when a write is still
    under way; the process then exits 130 (143). A second one during the wait abandons the writes
    (:func:`_abandon_cache_writes`): before, an interruption that ended this wait left the process
    waiting on, silently, in the interpreter's exit, where the next one printed the traceback above and
    cut the write off all the same (a second SIGTERM killed the process)."""
    from harness.background import any_pending, wait_all

    first = None
    while True:
        try:
            if interrupted is not None and any_pending():
                _say(FINISHING_CACHE_WRITE)
            wait_all()
            break
        except (KeyboardInterrupt, SystemExit) as exc:
            status = interruption_status(exc)
            if status is None:
                raise
            if interrupted is not None:
                _abandon_cache_writes(status)
            interrupted, first = status, exc
    if first is not None:
        raise first  # the command ends as it was interrupted, now that the write is complete


def _abandon_cache_writes(status: int) -> NoReturn:
    """End the process now with ``status`` (130, 143), the cache writes under way cut off: ``os._exit``,
    since the interpreter's exit would join their threads. Nothing else is left to do (the command's
    own ``finally`` blocks have run; its output is flushed here). A cut-off write has written only its
    temporary file or folder (``.<name>.<pid>-<host>.<random>.tmp``, :mod:`harness.atomic`), never the
    entry: its lock is released with the process, and the next run that needs the entry removes it
    (:func:`harness.atomic.remove_abandoned`: its process is gone) and writes the entry again."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # (no third interruption midway)
        try:
            signal.signal(signum, signal.SIG_IGN)
        except ValueError:  # (not the main thread)
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def _say(line: str) -> None:
    """``line`` on stderr (a closed one ignored)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def show_own_log_warnings() -> None:
    """The warnings the project logs (a cache that could not be written, another process building the same
    index, report.html not written) are printed as ``warning: <message>``, as its other warnings are:
    Python's last-resort handler printed the bare message, and the one message that carried its own
    ``warning:`` prefix for the command line read ``WARNING:harness.bench.runner:warning: ...`` to a library
    user who set up logging. A handler on the ``harness`` and ``retrievers`` loggers, for the command only;
    ``-q`` still hides them (``logging.disable``)."""
    import logging

    class ToStderr(logging.StreamHandler):
        """To ``sys.stderr`` as it is when a record comes (as logging's last resort), not as it was."""

        harness_cli = True

        @property
        def stream(self):
            return sys.stderr

        @stream.setter
        def stream(self, value) -> None:
            pass

    handler = ToStderr()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("warning: %(message)s"))
    for name in ("harness", "retrievers"):
        logger = logging.getLogger(name)
        if not any(getattr(h, "harness_cli", False) for h in logger.handlers):
            logger.addHandler(handler)


def show_own_deprecations() -> None:
    """The project's own DeprecationWarnings (a former name the user typed: ``-p backend=bm25s``) are
    for the user of the command: printed once each as ``warning: ... (deprecated)``, where Python's
    default filters hide a DeprecationWarning outside ``__main__``. Other packages' stay hidden. The
    project's :class:`~harness.errors.HarnessWarning` (an http retriever's failed queries), which the
    library issues through :mod:`warnings` and never prints, is printed each time as ``warning: ...``."""
    import warnings

    from harness.errors import HarnessWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if own_deprecation(category, filename):
            print(f"warning: {message} (deprecated)", file=sys.stderr)
        elif issubclass(category, HarnessWarning):
            print(f"warning: {message}", file=sys.stderr, flush=True)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("default", category=DeprecationWarning, module=r"(harness|retrievers)(\.|$)")
    warnings.filterwarnings("always", category=HarnessWarning)  # (each search's, as the CLI printed them before)


def own_deprecation(category: type, filename: str) -> bool:
    """Whether a warning is one of the project's own DeprecationWarnings (issued from a file of its
    packages, harness and retrievers, installed side by side)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["harness"].__file__)))
    own = tuple(os.path.join(root, package, "") for package in ("harness", "retrievers"))
    return issubclass(category, DeprecationWarning) and os.path.abspath(filename).startswith(own)


_exit_on_sigterm = exit_on_sigterm  # (the console script's entry point installs it first: harness/entry.py)


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
