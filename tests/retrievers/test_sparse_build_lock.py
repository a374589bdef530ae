"""Two processes encoding the same documents with the same sparse model encode them once
(retrievers/sparse/retriever.py ``document_weights`` under ``harness.atomic.build_lock``).

Two cold ``harness run -r sparse`` on one cache (two benchmark cells on one machine, a CI matrix sharing the
cache) each encoded the whole corpus side by side (both said ``cache: built``), as dense did before its lock.
Now the second waits for the first (a warning says so) and loads the complete entry: ``cache: hit``, the same
run. A process killed while encoding releases the lock (the kernel closes its descriptor), and the next one
encodes. The model: a tiny random SPLADE encoder built here (tests/retrievers/tiny_models.py)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import json_result, until

pytest.importorskip("fcntl")
pytest.importorskip("sentence_transformers.sparse_encoder")

REPO = Path(__file__).resolve().parents[2]
WORDS = "cancer diet fat heart blood risk study milk fish salt".split()

# Indexes a small corpus with the sparse retriever; its encoding of the documents (when it encodes them) first
# writes ``<name>.encoding`` and, with ``hold``, waits for the file ``go``; prints its cache status and run.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from harness.datasets.corpus import Corpus, Queries
    from retrievers.sparse.cache import SparseWeightCache
    from retrievers.sparse.retriever import SparseRetriever

    model, cache, name, hold = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "hold"
    build = SparseWeightCache.build

    def slow_build(self, *args, **kwargs):
        (cache.parent / f"{name}.encoding").write_text("")
        deadline = time.monotonic() + 60
        while hold and not (cache.parent / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return build(self, *args, **kwargs)

    SparseWeightCache.build = slow_build
    words = "cancer diet fat heart blood risk study milk fish salt".split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(1 + i % 4)) for i in range(12)]
    corpus = Corpus([f"d{i}" for i in range(12)], [""] * 12, texts)
    r = SparseRetriever(model=model, device="cpu", cache_dir=str(cache), cache_chunk_size=4, batch_size=4)
    r.index(corpus)
    run = r.search(Queries(["q1", "q2"], ["cancer diet", "fish salt milk"]), 5).to_dict()
    print(json.dumps({"cache": r.stats()["cache"], "run": run}))
""")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from tests.retrievers.tiny_models import sparse_encoder

    return sparse_encoder(tmp_path_factory.mktemp("splade"), WORDS)


@pytest.fixture
def processes():
    """The processes a test starts: any still running at its end (a failed test) are killed."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)


def _start(processes: list, tmp_path: Path, model: Path, name: str, hold: bool) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, str(model), str(tmp_path / "cache"), name,
                                "hold" if hold else "no"], env=env, stdout=subprocess.PIPE,
                               stderr=open(tmp_path / f"{name}.err", "w"), text=True)
    processes.append(process)
    return process


def test_a_second_process_waits_for_the_first_encoding_and_loads_it(tiny_model, tmp_path, processes):
    first = _start(processes, tmp_path, tiny_model, "first", hold=True)
    until(lambda: (tmp_path / "first.encoding").exists(), "the first encoding to start", timeout=120)
    second = _start(processes, tmp_path, tiny_model, "second", hold=False)
    until(lambda: "waiting for it" in (tmp_path / "second.err").read_text() or second.poll() is not None,
          "the second to wait (or to finish)", timeout=120)
    assert not (tmp_path / "second.encoding").exists()  # (it encoded beside the first: both 'built')
    (tmp_path / "go").write_text("")
    a, b = json_result(first), json_result(second)
    assert (a["cache"], b["cache"]) == ("built", "hit")
    assert not (tmp_path / "second.encoding").exists()  # (it encoded no document)
    assert b["run"] == a["run"]
    assert "another process is encoding the documents of" in (tmp_path / "second.err").read_text()
    assert all(p.is_dir() for p in (tmp_path / "cache").glob("doc-*"))  # (the lock is in .locks/, not among
    assert list((tmp_path / "cache" / ".locks").glob("doc-*.lock"))  # the entries)


def test_an_encoding_killed_while_holding_the_lock_lets_the_next_process_encode(tiny_model, tmp_path, processes):
    first = _start(processes, tmp_path, tiny_model, "first", hold=True)
    until(lambda: (tmp_path / "first.encoding").exists(), "the first encoding to start", timeout=120)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    b = json_result(_start(processes, tmp_path, tiny_model, "second", hold=False))
    assert b["cache"] == "built"
    assert (tmp_path / "second.encoding").exists()


def test_a_file_system_without_locks_encodes_unlocked(tiny_model, tmp_path, monkeypatch):
    """flock refused (ENOLCK, as some NFS and FUSE mounts answer): the entry is encoded and cached unlocked."""
    import fcntl

    from harness.datasets.corpus import Corpus
    from retrievers.sparse.retriever import SparseRetriever

    def refuse(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    corpus = Corpus(["d1", "d2", "d3"], [""] * 3, ["cancer diet", "fat heart blood", "milk fish salt"])
    for want in ("built", "hit"):
        r = SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path / "cache"))
        r.index(corpus)
        assert r.stats()["cache"] == want
