"""Two processes indexing the same corpus with the same settings build the SQLite FTS5 database once
(retrievers/engines/sqlite.py ``index``, harness/atomic.py ``build_lock``), as the BM25 index, dense
embeddings and sparse impacts are built (tests/retrievers/test_bm25_build_lock.py).

Two cold ``harness run -r sqlite`` on one cache (two cells of a benchmark, a CI matrix sharing its
cache) each built the whole database side by side, and both said ``cache: built`` (one rename won).
Expected: the second waits for the first's build (a warning: "another process is building the SQLite
index ...; waiting for it"), then loads the entry it wrote: ``cache: hit`` and the same run. A process
killed while building releases the lock (the kernel closes its descriptor) and the next one builds; a
cache that cannot be written still builds without it (test_engines_sqlite_unwritable_cache.py).
Engines review (s16, follow-up)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.processes import json_result, start_build, until

pytest.importorskip("fcntl")
if not sqlite3.connect(":memory:").execute("PRAGMA compile_options").fetchall().count(("ENABLE_FTS5",)):
    pytest.skip("this Python's SQLite is built without FTS5", allow_module_level=True)


# A process that indexes a small corpus in ``cache``; its build (when it builds) first writes
# ``<name>.building`` and, with ``hold``, waits (at most 60 s) for the file ``go``; it prints its stats and run.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from harness.datasets.corpus import Corpus, Queries
    from retrievers.engines.sqlite import SQLiteRetriever

    cache, name, hold = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "hold"
    build = SQLiteRetriever._build

    def slow_build(self, corpus, path):
        (cache.parent / f"{name}.building").write_text("")
        deadline = time.monotonic() + 60
        while hold and not (cache.parent / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return build(self, corpus, path)

    SQLiteRetriever._build = slow_build
    corpus = Corpus([f"d{i}" for i in range(20)], [""] * 20, [f"doc {i} topic{i % 5} item{i % 3}" for i in range(20)])
    r = SQLiteRetriever(cache_dir=cache, n_threads=1)
    r.index(corpus)
    run = r.search(Queries(["q1", "q2"], ["topic1 item2", "item0 doc"]), 5).to_dict()
    print(json.dumps({"stats": r.stats(), "run": run}))
""")


def _start(tmp_path: Path, name: str, hold: bool) -> subprocess.Popen:
    return start_build(SCRIPT, tmp_path, name, hold)


def test_a_second_process_waits_for_the_first_build_and_loads_it(tmp_path):
    first = _start(tmp_path, "first", hold=True)
    try:
        until(lambda: (tmp_path / "first.building").exists(), "the first build to start")
        second = _start(tmp_path, "second", hold=False)
        try:
            until(lambda: "waiting for it" in (tmp_path / "second.err").read_text(), "the second to wait")
            assert not (tmp_path / "second.building").exists()
            (tmp_path / "go").write_text("")
            a, b = json_result(first), json_result(second)
        finally:
            second.kill()
    finally:
        first.kill()
    assert a["stats"]["cache"] == "built"
    assert b["stats"]["cache"] == "hit"  # (was "built": the second built the whole database again)
    assert not (tmp_path / "second.building").exists()
    assert b["stats"]["index_path"] == a["stats"]["index_path"]
    assert b["run"] == a["run"] and b["run"]["q1"]  # the same entry, the same run
    assert "another process is building the SQLite index" in (tmp_path / "second.err").read_text()


def test_a_build_killed_while_holding_the_lock_lets_the_next_process_build(tmp_path):
    first = _start(tmp_path, "first", hold=True)
    try:
        until(lambda: (tmp_path / "first.building").exists(), "the first build to start")
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    b = json_result(_start(tmp_path, "second", hold=False))
    assert b["stats"]["cache"] == "built"
    assert (tmp_path / "second.building").exists()
    assert "waiting for it" not in (tmp_path / "second.err").read_text()
