"""The parsed-corpus cache file's size and CRC-32 are recorded beside it (``<file>.crc.json``, written
before the file is renamed into place) and checked by ``HARNESS_CORPUS_VERIFY=full`` before the file is
mapped. Before, full verification re-hashed the source only: a cache file whose text had changed on disk
since it was written (same size, its structure sound) was served, and the BM25 index built from it was
cached under the source's checksum."""

from __future__ import annotations

import json

import pytest

from harness.checksums import crc_record
from harness.datasets import beir, corpus_cache
from harness.datasets.beir import _scan_corpus, load_corpus
from tests.datasets.test_corpus_stream import _rows, _same, _write, cache_root  # noqa: F401  (a fixture)


def _cached(root):
    files = sorted((root / "corpora").glob("*.arrow"))
    assert len(files) == 1, files
    return files[0]


def _damage(path, old: bytes, new: bytes) -> None:
    """Replace the one occurrence of ``old`` in ``path`` by ``new`` (same length): the text changes, the
    file's size and structure do not."""
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    path.write_bytes(data.replace(old, new))


@pytest.mark.parametrize("stream", ["1", "0"])
def test_the_cache_file_has_its_size_and_crc_recorded(tmp_path, cache_root, monkeypatch, stream):
    # "1": streamed into the file and sealed in the background; "0": parsed whole, written in the background
    monkeypatch.setenv(beir.STREAM_ENV, stream)
    load_corpus(_write(tmp_path / "corpus.jsonl", _rows()), cache=True)
    corpus_cache.wait()
    target = _cached(cache_root)
    assert json.loads(corpus_cache.crc_path(target).read_text()) == crc_record(target)


def test_verify_full_parses_a_damaged_cache_file_again(tmp_path, cache_root, monkeypatch):
    path = _write(tmp_path / "corpus.jsonl", _rows())
    load_corpus(path, cache=True)
    corpus_cache.wait()
    target = _cached(cache_root)
    _damage(target, b"text 217 ", b"text 218 ")
    monkeypatch.setenv(corpus_cache.VERIFY_ENV, "full")
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert corpus.texts[217].startswith("text 217 ") and _same(corpus, _scan_corpus(path))
    assert json.loads(corpus_cache.crc_path(target).read_text()) == crc_record(target)  # written again, whole
    assert target.read_bytes().count(b"text 217 ") == 1


def test_verify_full_parses_a_file_with_no_record_again_and_records_it(tmp_path, cache_root, monkeypatch):
    # a file written before records were kept: full verification has nothing to check it against
    path = _write(tmp_path / "corpus.jsonl", _rows())
    load_corpus(path, cache=True)
    corpus_cache.wait()
    target = _cached(cache_root)
    corpus_cache.crc_path(target).unlink()
    monkeypatch.setenv(corpus_cache.VERIFY_ENV, "full")
    parsed = []
    stream = beir._stream_corpus
    monkeypatch.setattr(beir, "_stream_corpus", lambda p, w: parsed.append(p) or stream(p, w))
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert parsed == [path] and _same(corpus, _scan_corpus(path))
    assert json.loads(corpus_cache.crc_path(target).read_text()) == crc_record(target)


def test_a_sound_file_is_mapped_under_verify_full_without_parsing(tmp_path, cache_root, monkeypatch):
    path = _write(tmp_path / "corpus.jsonl", _rows())
    load_corpus(path, cache=True)
    corpus_cache.wait()
    monkeypatch.setenv(corpus_cache.VERIFY_ENV, "full")
    monkeypatch.setattr(beir, "_stream_corpus", lambda p, w: pytest.fail("parsed again"))
    monkeypatch.setattr(beir, "_parse_corpus", lambda p: pytest.fail("parsed again"))
    corpus = load_corpus(path, cache=True)
    assert _same(corpus, _scan_corpus(path)) and corpus._mapping is not None
