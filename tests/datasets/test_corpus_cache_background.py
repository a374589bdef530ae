"""The corpus cache written in the background, and the remembered checksum (harness/datasets/corpus_cache.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from harness.datasets import corpus_cache
from harness.datasets.beir import _scan_corpus, load_corpus

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    """These tests are about the background write: the path of a corpus parsed whole (the streamed
    one is tests/datasets/test_corpus_stream.py's)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_CORPUS_STREAM", "0")
    monkeypatch.delenv(corpus_cache.VERIFY_ENV, raising=False)
    yield tmp_path / "cache"
    corpus_cache.wait()


def _corpus_file(folder: Path, n: int = 300, suffix: str = "") -> Path:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"d{i}", "title": f"title {i}" if i % 3 else "",
                                        "text": f"text {i}{suffix} " + "word " * (i % 17)}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def _files(root: Path) -> list[str]:
    folder = root / "corpora"
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def writer_that(then, set_attr=setattr) -> None:
    """Make the corpus cache writer write the first 10 rows, then call ``then(write_rest)``
    (``write_rest()`` writes the other rows). ``set_attr``: how to patch (a test's monkeypatch)."""
    real_new_file = pa.ipc.new_file

    def new_file(sink, schema):
        writer = real_new_file(sink, schema)
        original = writer.write_table

        def write_table(table):
            original(table.slice(0, 10))
            then(lambda: original(table.slice(10)))
        writer.write_table = write_table
        return writer

    set_attr(pa.ipc, "new_file", new_file)


def _paused_writer(monkeypatch, paused: threading.Event, resume: threading.Event) -> None:
    """Make the cache writer write 10 rows, then wait for ``resume`` before the rest."""
    def pause(write_rest):
        paused.set()
        assert resume.wait(30)
        write_rest()

    writer_that(pause, monkeypatch.setattr)


def _lies_in(corpus, mapping) -> bool:
    base = pa.py_buffer(mapping).address
    data = corpus.table.column("text").chunk(0).buffers()[2]
    return base <= data.address < base + len(mapping)


def test_background_write_is_atomic_and_the_corpus_moves_to_the_map(tmp_path, cache_root, monkeypatch):
    """While the writer is half-way only its temporary file exists and the corpus reads the parsed
    table; once it is done the .arrow file is complete, the corpus reads the map, and every read (a
    pass of corpus_chunks across the switch included) gives the line scan's rows."""
    from retrievers.texts import corpus_chunks, corpus_columns

    path = _corpus_file(tmp_path)
    expected = _scan_corpus(path)
    paused, resume = threading.Event(), threading.Event()
    _paused_writer(monkeypatch, paused, resume)
    corpus = load_corpus(path, cache=True)
    assert paused.wait(30)
    (tmp,) = _files(cache_root)
    assert tmp.endswith(".tmp") and corpus._mapping is None  # no .arrow before the rename
    assert corpus.table.equals(expected.table)
    chunks = corpus_chunks(corpus, 128)
    first = next(chunks)  # read from the table in RAM
    columns = corpus_columns(corpus, 100)  # (the BM25 build's reader: Arrow arrays, each read before the next)
    first_columns = [a.to_pylist() for a in next(columns)]
    resume.set()
    corpus_cache.wait()
    name = f"{corpus_cache.source_checksum(path)}-v{corpus_cache.FORMAT}.arrow"
    assert _files(cache_root) == [name, f"{name}.crc.json"]  # (the file, and its size and CRC-32)
    assert corpus._mapping is not None and _lies_in(corpus, corpus._mapping)
    rest = list(chunks)  # read from the map
    for column, name in zip(zip(first, *rest), ("_id", "title", "text")):
        assert [v for part in column for v in part] == expected.table.column(name).to_pylist()
    rest_columns = [[a.to_pylist() for a in pair] for pair in columns]
    for i, name in enumerate(("title", "text")):
        assert [v for part in [first_columns, *rest_columns] for v in part[i]] == expected.table.column(name).to_pylist()
    assert corpus.table.equals(expected.table) and corpus.ids == expected.ids
    monkeypatch.setattr("harness.datasets.beir._parse_corpus", lambda p: pytest.fail("parsed again"))
    warm = load_corpus(path, cache=True)
    assert warm._mapping is not None and warm.table.equals(expected.table)


def test_a_second_load_waits_for_the_write_in_progress(tmp_path, cache_root, monkeypatch):
    path = _corpus_file(tmp_path)
    paused, resume = threading.Event(), threading.Event()
    _paused_writer(monkeypatch, paused, resume)
    cold = load_corpus(path, cache=True)
    assert paused.wait(30)
    monkeypatch.setattr("harness.datasets.beir._parse_corpus", lambda p: pytest.fail("parsed again"))
    threading.Timer(0.2, resume.set).start()
    second = load_corpus(path, cache=True)  # waits for the file, then maps it
    assert second._mapping is not None and second.table.equals(cold.table)


def test_interrupted_write_leaves_no_cache_file(tmp_path, cache_root, monkeypatch):
    """The background writer fails half-way: neither the .arrow file nor its temporary file is left,
    the corpus (in RAM) is whole, and the next load writes the cache."""
    path = _corpus_file(tmp_path)
    real_new_file = pa.ipc.new_file

    def interrupt(write_rest):
        raise RuntimeError("interrupted")

    writer_that(interrupt, monkeypatch.setattr)
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert _files(cache_root) == []  # neither .arrow nor a temporary file
    assert corpus._mapping is None and corpus.table.equals(_scan_corpus(path).table)
    monkeypatch.setattr(pa.ipc, "new_file", real_new_file)
    assert len(load_corpus(path, cache=True)) == 300
    corpus_cache.wait()
    name, record = _files(cache_root)
    assert name.endswith(".arrow") and record == f"{name}.crc.json"


def test_a_failed_write_is_logged_and_the_corpus_stays_in_memory(tmp_path, cache_root, monkeypatch, caplog):
    path = _corpus_file(tmp_path)

    def full_disk(target, table, digest):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(corpus_cache, "write_cached", full_disk)
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert corpus._mapping is None and corpus.table.equals(_scan_corpus(path).table)
    assert "could not write the corpus cache" in caplog.text and _files(cache_root) == []


_CHILD = r"""
import sys, time
from harness.datasets import corpus_cache
from harness.datasets.beir import load_corpus
from tests.datasets.test_corpus_cache_background import writer_that
def pause(write_rest):
    if sys.argv[2] == "slow":
        time.sleep(0.5)
        return write_rest()
    sys.stdout.write("paused\n"); sys.stdout.flush()  # one write: the main thread prints too
    time.sleep(60)
writer_that(pause)
sys.stdout.write(f"{len(load_corpus(sys.argv[1], cache=True))}\n"); sys.stdout.flush()
sys.exit(0)
"""


def _child(path: Path, mode: str, cache_root: Path) -> subprocess.Popen:
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache_root), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(path), mode], env=env, stdout=subprocess.PIPE,
                            text=True)


def test_the_process_exits_only_once_the_cache_is_written(tmp_path, cache_root):
    """The writer thread is not a daemon: a process that returns from the load and exits at once still
    leaves the complete cache file behind."""
    path = _corpus_file(tmp_path)
    child = _child(path, "slow", cache_root)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and out.split() == ["300"]
    name, record = _files(cache_root)
    assert record == f"{name}.crc.json"
    target = cache_root / "corpora" / name
    digest = corpus_cache.source_checksum(path)
    assert name == f"{digest}-v{corpus_cache.FORMAT}.arrow"
    table, _ = corpus_cache.open_cached(target, digest, ("_id", "title", "text"))
    assert table.equals(_scan_corpus(path).table)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_process_killed_while_writing_leaves_no_cache_file(tmp_path, cache_root):
    path = _corpus_file(tmp_path)
    child = _child(path, "killed", cache_root)
    try:
        lines = [child.stdout.readline().strip() for _ in range(2)]  # the load returned; the writer paused
        assert sorted(lines) == ["300", "paused"]
    finally:
        child.kill()
        child.communicate(timeout=60)
    assert [n for n in _files(cache_root) if n.endswith(".arrow")] == []  # a stray temporary file at most
    corpus = load_corpus(path, cache=True)  # parsed again, cached this time
    corpus_cache.wait()
    assert corpus._mapping is not None and corpus.table.equals(_scan_corpus(path).table)


# --- the remembered checksum ---------------------------------------------------------------------------

def _count_hashes(monkeypatch) -> list:
    from harness.checksums import sha256

    calls = []
    monkeypatch.setattr(corpus_cache, "sha256", lambda p: calls.append(Path(p).name) or sha256(p))
    return calls


def test_first_load_hashes_while_parsing_and_later_loads_trust_the_stamp(tmp_path, cache_root, monkeypatch):
    from harness.checksums import sha256

    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 0)
    path = _corpus_file(tmp_path)
    hashed = _count_hashes(monkeypatch)
    threads = []
    counted = corpus_cache.sha256
    monkeypatch.setattr(corpus_cache, "sha256", lambda p: threads.append(threading.current_thread().name) or counted(p))
    cold = load_corpus(path, cache=True)
    assert hashed == ["corpus.jsonl"] and threads[0].startswith("sha256")  # on its own thread
    assert cold.fingerprint == corpus_cache.fingerprint(sha256(path))
    corpus_cache.wait()
    warm = load_corpus(path, cache=True)
    assert hashed == ["corpus.jsonl"] and warm._mapping is not None  # the stamp matched: not hashed
    monkeypatch.setenv(corpus_cache.VERIFY_ENV, "full")
    assert load_corpus(path, cache=True).fingerprint == cold.fingerprint and hashed == ["corpus.jsonl"] * 2


def test_a_touched_file_is_hashed_not_parsed_and_a_changed_one_is_parsed(tmp_path, cache_root, monkeypatch):
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 0)
    path = _corpus_file(tmp_path)
    load_corpus(path, cache=True)
    corpus_cache.wait()
    hashed = _count_hashes(monkeypatch)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same bytes, another stamp
    import harness.datasets.beir as beir

    real_parse = beir._parse_corpus
    monkeypatch.setattr(beir, "_parse_corpus", lambda p: pytest.fail("parsed again"))
    touched = load_corpus(path, cache=True)
    assert hashed == ["corpus.jsonl"] and touched._mapping is not None
    _corpus_file(tmp_path, suffix=" changed")  # other bytes: the stamp changed, the key too
    monkeypatch.setattr(beir, "_parse_corpus", real_parse)
    changed = load_corpus(path, cache=True)
    assert changed.texts[0] == "text 0 changed " and hashed == ["corpus.jsonl"] * 2
    assert changed.fingerprint != touched.fingerprint


def test_corpus_chunks_read_the_same_with_or_without_the_id_list(tmp_path):
    """corpus_chunks slices ``corpus.ids`` once it exists, else reads the ids per slice: same chunks."""
    from retrievers.texts import corpus_chunks

    path = _corpus_file(tmp_path, n=1000)
    corpus = load_corpus(path, cache=False)
    before = list(corpus_chunks(corpus, 128))
    assert "ids" not in corpus.__dict__  # the pass did not make the whole list
    assert corpus.ids == [f"d{i}" for i in range(1000)]
    after = list(corpus_chunks(corpus, 128))
    assert after == before and len(before) == 8 and before[-1][0] == [f"d{i}" for i in range(896, 1000)]
    assert [t for chunk in before for t in chunk[2]] == _scan_corpus(path).table.column("text").to_pylist()
    without = list(corpus_chunks(corpus, 128, ids=False))  # (the BM25 build reads no ids)
    assert [c[0] for c in without] == [None] * 8 and [c[1:] for c in without] == [c[1:] for c in before]
