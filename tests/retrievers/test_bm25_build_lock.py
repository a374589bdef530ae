"""Two processes indexing the same corpus with the same settings build the BM25 index once
(retrievers/bm25/lucene_backend.py ``_cached_or_built``, harness/atomic.py ``build_lock``).

Two cold ``harness run -r bm25`` on one cache (two cells of a benchmark on Ray, a CI matrix sharing its
cache) each built the same entry side by side: at MS MARCO's size 72 s and 6 GB each. Measured on the
1M-document synthetic corpus: both said ``cache: built``. Now the second waits for the first's build (a
warning says so) and loads the entry it wrote: ``cache: hit``, and the same run. A process killed
while building releases the lock (the kernel closes its descriptor), and the next one builds."""

from __future__ import annotations

import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.processes import json_result, start_build, until

pytest.importorskip("fcntl")


# A process that indexes a small corpus in ``cache``; its build (when it builds) first writes
# ``<name>.building`` and, with ``hold``, waits for the file ``go``; it prints its stats and run.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from harness.datasets.corpus import Corpus, Queries
    from retrievers.bm25 import BM25Retriever
    from retrievers.bm25.lucene_backend import LuceneBackend

    cache, name, hold = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "hold"
    build = LuceneBackend.build

    def slow_build(self, corpus):
        (cache.parent / f"{name}.building").write_text("")
        deadline = time.monotonic() + 60
        while hold and not (cache.parent / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return build(self, corpus)

    LuceneBackend.build = slow_build
    corpus = Corpus([f"d{i}" for i in range(20)], [""] * 20, [f"doc {i} topic{i % 5} item{i % 3}" for i in range(20)])
    r = BM25Retriever(cache_dir=cache)
    r.index(corpus)
    run = r.search(Queries(["q1", "q2"], ["topic1 item2", "item0 doc"]), 5).to_dict()
    print(json.dumps({"stats": r.stats(), "run": run}))
""")


def _start(tmp_path: Path, name: str, hold: bool) -> subprocess.Popen:
    return start_build(SCRIPT, tmp_path, name, hold)




def test_a_second_process_waits_for_the_first_build_and_loads_it(tmp_path):
    first = _start(tmp_path, "first", hold=True)
    until(lambda: (tmp_path / "first.building").exists(), "the first build to start")
    second = _start(tmp_path, "second", hold=False)
    until(lambda: "waiting for it" in (tmp_path / "second.err").read_text(), "the second to wait")
    assert not (tmp_path / "second.building").exists()
    (tmp_path / "go").write_text("")
    a, b = json_result(first), json_result(second)
    assert a["stats"]["cache"] == "built"
    assert b["stats"]["cache"] == "hit"  # (the second built nothing: no second.building)
    assert not (tmp_path / "second.building").exists()
    assert b["run"] == a["run"]
    assert "another process is building the BM25 index" in (tmp_path / "second.err").read_text()


def test_a_build_killed_while_holding_the_lock_lets_the_next_process_build(tmp_path):
    first = _start(tmp_path, "first", hold=True)
    until(lambda: (tmp_path / "first.building").exists(), "the first build to start")
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    b = json_result(_start(tmp_path, "second", hold=False))
    assert b["stats"]["cache"] == "built"
    assert (tmp_path / "second.building").exists()


def test_an_unlockable_cache_builds_unlocked(tmp_path):
    """A cache root under a file (as a read-only mount): no lock file can be made; the build goes on."""
    from harness.datasets.corpus import Corpus
    from retrievers.bm25 import BM25Retriever

    (tmp_path / "a-file").write_text("")
    r = BM25Retriever(cache_dir=tmp_path / "a-file" / "cache")
    r.index(Corpus(["d1", "d2"], ["", ""], ["alpha beta", "beta gamma"]))
    assert r.stats()["cache"] == "built, not cached (Not a directory)"
