"""Cache files written on background threads, keyed by their path, waited for by key or all at once.

The threads are not daemons: the interpreter joins them at exit, so a process never ends before a
cache file it started is complete (the file itself is written atomically by the task). A wait is on
an event the thread sets when its task is over, not ``Thread.join()``: a join interrupted by an
exception from a signal handler (SIGTERM's ``SystemExit(143)`` in the CLI, Ctrl-C) marks the
still-running thread as stopped (CPython 3.11's ``_wait_for_tstate_lock`` releases its lock), so the
interpreter's exit no longer waited for it and ended the write midway, its temporary files left.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Callable

_every: "weakref.WeakSet[PendingWrites]" = weakref.WeakSet()  # for wait_all


def wait_all() -> None:
    """Wait until every pending write of every :class:`PendingWrites` (each cache's) is finished."""
    for pending in list(_every):
        pending.wait()


def any_pending() -> bool:
    """Whether a write of any :class:`PendingWrites` is still under way (:func:`wait_all` would wait)."""
    return any(pending.busy() for pending in list(_every))


class PendingWrites:
    """At most one writer thread per key (a cache file or folder) at a time."""

    def __init__(self) -> None:
        self._threads: dict[Path, tuple[threading.Thread, threading.Event]] = {}  # key -> (writer, its task is over)
        self._lock = threading.Lock()
        _every.add(self)

    def start(self, key: Path, task: Callable[[], None], name: str) -> threading.Thread:
        """Run ``task()`` on a new non-daemon thread registered under ``key`` until it returns."""
        done = threading.Event()

        def run() -> None:
            try:
                task()
            finally:
                with self._lock:
                    if self._threads.get(key, (None,))[0] is thread:
                        del self._threads[key]
                done.set()

        thread = threading.Thread(target=run, name=name)
        with self._lock:
            self._threads[key] = thread, done
        thread.start()
        return thread

    def busy(self) -> bool:
        """Whether a write is under way (registered and not over)."""
        with self._lock:
            return bool(self._threads)

    def wait(self, key: Path | None = None) -> None:
        """Wait until the write of ``key`` (every pending one when None) is finished (on its event:
        see the module docstring)."""
        with self._lock:
            pending = list(self._threads.values()) if key is None else [self._threads.get(key)]
        for entry in pending:
            if entry is not None:
                entry[1].wait()
