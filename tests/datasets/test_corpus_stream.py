"""A cached corpus parsed batch by batch straight into its cache file (beir._stream_corpus,
corpus_cache.stream_into_cache), and every way back to the whole parse."""

from __future__ import annotations

import gzip
import json
import logging

import pyarrow as pa
import pytest

from harness.checksums import content_sha256
from harness.datasets import beir, corpus_cache
from harness.datasets.beir import _scan_corpus, load_corpus
from harness.errors import InputError


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(corpus_cache.VERIFY_ENV, raising=False)
    monkeypatch.delenv(beir.STREAM_ENV, raising=False)
    yield tmp_path / "cache"
    corpus_cache.wait()


def _rows(n: int = 400):
    return [{"_id": f"d{i}", **({"title": f"title {i}"} if i % 3 else {}), "text": f"text {i} é " + "w " * (i % 13),
             "metadata": {"n": i}} for i in range(n)]


def _write(path, rows, gz: bool = False):
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if gz:
        path = path.with_suffix(".jsonl.gz")
        with gzip.open(path, "wb") as handle:
            handle.write(text)
    else:
        path.write_bytes(text)
    return path


def _leftovers(root):
    folder = root / "corpora"
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp")) if folder.is_dir() else []


def _same(corpus, reference) -> bool:
    return (corpus.ids == reference.ids and list(corpus.titles) == list(reference.titles)
            and list(corpus.texts) == list(reference.texts))


def _in_map(corpus) -> bool:
    mapping = corpus._mapping
    if mapping is None:
        return False
    base = pa.py_buffer(mapping).address
    return all(base <= chunk.buffers()[2].address < base + len(mapping)
               for name in ("_id", "text") for chunk in corpus.table.column(name).chunks)


@pytest.mark.parametrize("gz", [False, True])
def test_cold_load_streams_into_the_cache_file_and_maps_it(tmp_path, cache_root, monkeypatch, gz):
    """The first load of a cached corpus never holds it whole in RAM: its batches are written to the
    cache file (named by the source's sha256, hashed meanwhile), which the corpus then reads; the
    rows are the line scan's (null titles as ""), nothing temporary is left, and the next load maps
    the same file without parsing."""
    path = _write(tmp_path / "corpus.jsonl", _rows(), gz)
    monkeypatch.setattr(beir, "_parse_corpus", lambda p: pytest.fail("parsed whole"))
    corpus = load_corpus(path, cache=True)
    assert _same(corpus, _scan_corpus(path)) and corpus.titles[0] == ""
    assert _in_map(corpus)
    corpus_cache.wait()  # (fsynced and renamed into place in the background)
    files = sorted(p.name for p in (cache_root / "corpora").glob("*.arrow"))
    # (named by the content's sha256: a .gz's decompressed bytes, docs/cache.md)
    assert files == [f"{content_sha256(path)}-v{corpus_cache.FORMAT}.arrow"] and _leftovers(cache_root) == []
    monkeypatch.setattr(beir, "_stream_corpus", lambda p, w: pytest.fail("streamed again"))
    again = load_corpus(path, cache=True)
    assert _same(again, corpus) and _in_map(again)
    assert corpus.fingerprint == again.fingerprint == corpus_cache.fingerprint(content_sha256(path))


@pytest.mark.parametrize("fault", ["duplicate id", "number for a string", "bad utf-8", "null id", "bad json"])
def test_a_refused_stream_falls_back_to_the_whole_parse(tmp_path, cache_root, fault):
    """Whatever the fast parse or the stream's checks refuse (after batches were written) ends as the
    whole parse ends -- the same corpus or the same error naming the line -- with no file left."""
    rows = _rows(300)
    path = tmp_path / "corpus.jsonl"
    if fault == "duplicate id":
        rows[250]["_id"] = "d3"
    elif fault == "number for a string":
        rows[250]["_id"] = 7
    elif fault == "null id":
        rows[250]["_id"] = None
    _write(path, rows)
    if fault == "bad utf-8":
        path.write_bytes(path.read_bytes().replace(b"text 250", b"text \xff250"))
    elif fault == "bad json":
        path.write_bytes(path.read_bytes().replace(b'{"_id": "d250"', b'{"_id": "d250",,'))
    try:
        want = _scan_corpus(path)
    except InputError as exc:
        with pytest.raises(InputError) as err:
            load_corpus(path, cache=True)
        assert str(err.value) == str(exc)
    else:
        got = load_corpus(path, cache=True)
        assert _same(got, want)
    corpus_cache.wait()
    assert _leftovers(cache_root) == []


def test_an_unwritable_cache_parses_whole_and_says_so(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv(beir.STREAM_ENV, raising=False)
    path = _write(tmp_path / "corpus.jsonl", _rows())
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus(path, cache=True)
        corpus_cache.wait()
    assert _same(corpus, _scan_corpus(path)) and not _in_map(corpus)
    assert "could not write the corpus cache" in caplog.text


def test_a_write_failing_midway_leaves_nothing_and_parses_whole(tmp_path, cache_root, monkeypatch, caplog):
    """A write error after some batches (a full disk): logged, the temporary file removed, and the
    corpus parsed whole (whose own cache write is then tried in the background, as before)."""
    real_new_file = pa.ipc.new_file
    written = []

    def new_file(sink, schema):
        writer = real_new_file(sink, schema)

        class Failing:
            def write_batch(self, batch):
                if written:
                    raise OSError(28, "No space left on device")
                written.append(batch.num_rows)
                writer.write_batch(batch)

            def close(self):
                writer.close()
        return Failing()

    monkeypatch.setattr(pa.ipc, "new_file", new_file)
    monkeypatch.setattr("harness.datasets.jsonl.BLOCK_BYTES", 4096)  # several batches
    path = _write(tmp_path / "corpus.jsonl", _rows())
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus(path, cache=True)
    monkeypatch.undo()
    corpus_cache.wait()
    assert written and "No space left on device" in caplog.text
    assert _same(corpus, _scan_corpus(path)) and _leftovers(cache_root) == []


def test_the_switch_turns_streaming_off(tmp_path, cache_root, monkeypatch):
    monkeypatch.setenv(beir.STREAM_ENV, "0")
    monkeypatch.setattr(beir, "_stream_corpus", lambda p, w: pytest.fail("streamed"))
    path = _write(tmp_path / "corpus.jsonl", _rows())
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert _same(corpus, _scan_corpus(path))
