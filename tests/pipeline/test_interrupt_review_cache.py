"""Interruption / damage review of the per-stage run cache (harness/pipeline/cache.py)."""

from __future__ import annotations

import subprocess
import sys

from harness.pipeline import StageCache
from harness.run import Run

KEY = "ab" + "0" * 62
RESULTS = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 0.5, "d4": 0.25}}


def stored(tmp_path) -> StageCache:
    cache = StageCache(tmp_path / "pipelines")
    cache.store(KEY, Run.from_dict(RESULTS), {"timings": {"search_s": 1.0}, "info": {}})
    return cache


def test_a_run_file_cut_at_a_line_boundary_is_recomputed_not_trusted(tmp_path):
    """The run file of a cached stage loses its last line (a torn copy, a full disk during a copy of
    the cache): it still parses, so the stage was a "hit" with q2's d4 gone (a fused or reranked
    stage evaluated on that run then scores lower, silently). Expected: load() returns None (the
    stage is recomputed), as the README promises of every cache ("a damaged entry is rebuilt,
    never trusted")."""
    cache = stored(tmp_path)
    run, meta = cache.load(KEY)
    assert run.to_dict() == RESULTS and meta == {"timings": {"search_s": 1.0}, "info": {}}
    run_path, _ = cache.paths(KEY)
    lines = run_path.read_bytes().splitlines(keepends=True)
    run_path.write_bytes(b"".join(lines[:-1]))
    assert cache.load(KEY) is None


def test_a_run_file_with_a_changed_score_is_recomputed(tmp_path):
    """One digit of a score changed in place (same size): expected None, not the changed run."""
    cache = stored(tmp_path)
    run_path, _ = cache.paths(KEY)
    text = run_path.read_text()
    run_path.write_text(text.replace(" 3.0 ", " 9.0 ", 1))
    assert cache.load(KEY) is None


def test_a_killed_stores_temporary_run_file_is_removed_by_the_next_store(tmp_path):
    """A process killed (SIGKILL) while writing a stage's run leaves .<key>.trec.<pid>.<random>.tmp
    (45 MB at 1,000 queries x 1,000); expected: the next store into that folder removes it."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    folder = tmp_path / "pipelines" / KEY[:2]
    folder.mkdir(parents=True)
    stale = folder / f".{KEY}.trec.{child.pid}.abcd1234.tmp"
    stale.write_text("q1 Q0 d1 1 3.0 t\n")
    stored(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == [f"{KEY}.json", f"{KEY}.trec"]
