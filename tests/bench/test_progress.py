"""harness.progress: off (not a terminal, --quiet, HARNESS_PROGRESS=0) costs nothing; on, nested tasks
share one live display that goes away when the outermost task ends."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from harness import progress


@pytest.fixture
def terminal(monkeypatch):
    """Progress drawn on a fake terminal; state restored afterwards."""
    buffer = io.StringIO()
    monkeypatch.delenv(progress.ENV_VAR, raising=False)
    progress.use_console(Console(file=buffer, force_terminal=True, width=100))
    progress.disable(False)
    yield buffer
    progress.use_console(None)
    progress.disable(False)


def test_off_when_not_a_terminal():
    progress.use_console(Console(file=io.StringIO(), force_terminal=False))
    try:
        assert not progress.enabled()
        items = [1, 2, 3]
        assert progress.track(items, "x") is items  # the iterable itself: no wrapper at all
        with progress.task("x", total=3) as bar:
            assert isinstance(bar, progress.NullBar)
            bar.advance(2)
            bar.update(total=5, description="y")
    finally:
        progress.use_console(None)


def test_quiet_and_environment_turn_it_off(terminal, monkeypatch):
    assert progress.enabled()
    progress.disable()
    assert not progress.enabled()
    progress.disable(False)
    monkeypatch.setenv(progress.ENV_VAR, "0")
    assert not progress.enabled()


def test_nested_tasks_share_one_display(terminal):
    with progress.task("outer", total=2, unit="cells") as outer:
        display = progress._state["display"]
        assert display is not None
        seen = []
        for item in progress.track(["a", "b", "c"], "inner", unit="docs"):
            assert progress._state["display"] is display  # the same live display
            seen.append(item)
            inner = [t for t in display.tasks if t.description == "inner"][0]
        assert seen == ["a", "b", "c"] and inner.completed == 3 and inner.total == 3
        outer.advance(2)
        (task,) = display.tasks  # the inner task was removed when its loop ended
        assert task.description == "outer" and task.completed == 2
        display.refresh()
        assert "outer" in terminal.getvalue() and "2/2 cells" in terminal.getvalue()
    assert progress._state["display"] is None and progress._state["depth"] == 0


def test_display_stops_when_the_block_raises(terminal):
    with pytest.raises(RuntimeError):
        with progress.task("doomed"):
            raise RuntimeError("boom")
    assert progress._state["display"] is None and progress._state["depth"] == 0
