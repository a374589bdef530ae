"""Cache files written on background threads, keyed by their path, waited for by key or all at once.

The threads are not daemons: the interpreter joins them at exit, so a process never ends before a
cache file it started is complete (the file itself is written atomically by the task).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable


class PendingWrites:
    """At most one writer thread per key (a cache file or folder) at a time."""

    def __init__(self) -> None:
        self._threads: dict[Path, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, key: Path, task: Callable[[], None], name: str) -> threading.Thread:
        """Run ``task()`` on a new non-daemon thread registered under ``key`` until it returns."""
        def run() -> None:
            try:
                task()
            finally:
                with self._lock:
                    if self._threads.get(key) is thread:
                        del self._threads[key]

        thread = threading.Thread(target=run, name=name)
        with self._lock:
            self._threads[key] = thread
        thread.start()
        return thread

    def wait(self, key: Path | None = None) -> None:
        """Wait until the write of ``key`` (every pending one when None) is finished."""
        with self._lock:
            threads = list(self._threads.values()) if key is None else [self._threads.get(key)]
        for thread in threads:
            if thread is not None:
                thread.join()
