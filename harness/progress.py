"""Progress bars for the long steps: loading, indexing, encoding, searching, evaluating.

Retrievers and commands report progress through two helpers::

    from harness import progress

    with progress.task("encoding documents", total=len(texts), unit="docs") as bar:
        for batch in batches:
            ...
            bar.advance(len(batch))

    for text in progress.track(queries.texts, "searching", unit="queries"):
        ...

``total=None`` draws a spinner with a running count instead of a bar. Nested tasks (a benchmark's
cell counter, the stage, a retriever's own loop) share one live display, drawn by rich on stderr.
Bars are transient: they disappear when their task ends, leaving only the lines printed with
:func:`echo`.

Progress is shown only when stderr (where it is drawn) is a terminal, and never after
:func:`disable` (``--quiet``) or with ``HARNESS_PROGRESS=0`` in the environment. With stdout
redirected (``harness bench x > log``) the bars still show on the terminal and stdout gets the
plain lines. When off, ``task``
yields a no-op bar and ``track`` returns the iterable itself, so callers pay nothing.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")
ENV_VAR = "HARNESS_PROGRESS"

_lock = threading.RLock()
_state: dict = {"disabled": False, "console": None, "display": None, "depth": 0}


def disable(flag: bool = True) -> None:
    """Turn progress off (``--quiet``) or back on (``disable(False)``)."""
    _state["disabled"] = bool(flag)


def use_console(console) -> None:
    """Draw on ``console`` (a rich Console) instead of stderr; None restores the default."""
    _state["console"] = console


def _console():
    if _state["console"] is None:
        from rich.console import Console

        _state["console"] = Console(stderr=True)
    return _state["console"]


def enabled() -> bool:
    """Whether bars are drawn: not disabled, not turned off by the environment, on a terminal."""
    if _state["disabled"] or os.environ.get(ENV_VAR, "").strip().lower() in {"0", "false", "no", "off"}:
        return False
    return bool(_console().is_terminal)


class Bar:
    """A handle on one task of the live display."""

    def __init__(self, display, task_id) -> None:
        self._display, self._id = display, task_id

    def advance(self, n: float = 1) -> None:
        self._display.advance(self._id, n)

    def update(self, *, total: float | None = None, completed: float | None = None,
               description: str | None = None) -> None:
        fields = {k: v for k, v in (("total", total), ("completed", completed), ("description", description))
                  if v is not None}
        self._display.update(self._id, **fields)


class NullBar(Bar):
    """What ``task`` yields when progress is off: every call is a no-op."""

    def __init__(self) -> None:
        pass

    def advance(self, n: float = 1) -> None:
        pass

    def update(self, **_fields) -> None:
        pass


def _new_display():
    from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class Count(ProgressColumn):  # "3/4 cells" with a total, "1,234 docs" without, nothing before the first
        def render(self, task):
            unit = task.fields.get("unit", "items")
            done = f"{task.completed:,.0f}"
            if task.total is not None:
                return Text(f"{done}/{task.total:,.0f} {unit}", style="progress.download")
            return Text(f"{done} {unit}" if task.completed else "", style="progress.download")

    class Rate(ProgressColumn):  # "123 docs/s" once a rate is known
        def render(self, task):
            speed = task.finished_speed or task.speed
            if not speed:
                return Text("")
            return Text(f"{speed:,.{1 if speed < 10 else 0}f} {task.fields.get('unit', 'items')}/s",
                        style="progress.data.speed")

    # Lines printed to stdout while bars show are drawn above them only when stdout is the same
    # terminal; a redirected stdout (a file, a pipe) keeps receiving them untouched.
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), Count(), Rate(),
                    TimeElapsedColumn(), console=_console(), transient=True, redirect_stdout=_stdout_is_terminal())


def _stdout_is_terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def task(description: str, total: float | None = None, unit: str = "items") -> Iterator[Bar]:
    """A progress task for the duration of the block; yields a :class:`Bar` (a no-op when off)."""
    if not enabled():
        yield NullBar()
        return
    with _lock:
        if _state["display"] is None:
            _state["display"] = _new_display()
            _state["display"].start()
        display = _state["display"]
        _state["depth"] += 1
        task_id = display.add_task(description, total=total, unit=unit)
    try:
        yield Bar(display, task_id)
    finally:
        with _lock:
            display.remove_task(task_id)
            _state["depth"] -= 1
            if _state["depth"] == 0:
                display.stop()
                _state["display"] = None


def track(iterable: Iterable[T], description: str, total: float | None = None, unit: str = "items") -> Iterable[T]:
    """Iterate ``iterable`` while advancing a bar (the iterable itself when progress is off)."""
    if not enabled():
        return iterable
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    return _tracked(iterable, description, total, unit)


def _tracked(iterable: Iterable[T], description: str, total: float | None, unit: str) -> Iterator[T]:
    with task(description, total=total, unit=unit) as bar:
        for item in iterable:
            yield item
            bar.advance(1)


def echo(message: str, err: bool = False) -> None:
    """Print a line (stdout, or stderr with ``err``). While bars show, rich's live display captures both
    streams and prints the line above the bars, so the two never garble each other."""
    import sys

    print(message, file=sys.stderr if err else sys.stdout, flush=True)
