"""A cold load of a ``.gz`` corpus decompresses it once: its content checksum (the sha256 of the decompressed text,
harness.checksums.content_sha256) is taken from the bytes the parse reads (harness.datasets.jsonl.ContentDigest),
not by gunzipping the file a second time on the hashing thread (1M documents, 161 MiB of gzip: ~0.86 s CPU).
Only a read that reached the end of the file gives it; otherwise the file is hashed as before."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from harness.checksums import content_sha256
from harness.datasets import corpus_cache, jsonl
from harness.datasets.beir import COLUMNS, load_corpus
from harness.errors import InputError

LINES = [json.dumps({"_id": f"d{i}", "title": f"title {i}", "text": f"text number {i} " * 30}) + "\n"
         for i in range(400)]


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)  # (as a corpus of 32 MiB or more: hashed while parsed)
    yield tmp_path / "cache"
    corpus_cache.wait()


def _gz(folder: Path, text: bytes, members: int = 1) -> Path:
    """``text`` gzipped into ``members`` gzip members (concatenated, as ``cat a.gz b.gz``), level 1, mtime 0."""
    cut = [len(text) * i // members for i in range(members + 1)]
    path = folder / "corpus.jsonl.gz"
    path.write_bytes(b"".join(gzip.compress(text[a:b], compresslevel=1, mtime=0) for a, b in zip(cut, cut[1:])))
    return path


def _opens(monkeypatch) -> list[str]:
    """The names of the files opened through jsonl.open_binary (the parse's and content_sha256's reads)."""
    opened = []
    real = jsonl.open_binary
    monkeypatch.setattr(jsonl, "open_binary", lambda p: opened.append(Path(p).name) or real(p))
    return opened


TEXTS = {"one-member": ("".join(LINES).encode(), 1),
         "bom-3-members-crlf": (b"\xef\xbb\xbf" + "".join(LINES).replace("\n", "\r\n").encode(), 3)}


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "parsed-whole"])
@pytest.mark.parametrize("kind", TEXTS)
def test_a_cold_load_of_a_gz_decompresses_it_once_and_records_its_content_checksum(tmp_path, cache_root,
                                                                                   monkeypatch, kind, streamed):
    text, members = TEXTS[kind]
    path = _gz(tmp_path, text, members)
    text_sha = hashlib.sha256(text).hexdigest()
    assert content_sha256(path) == text_sha
    if not streamed:
        monkeypatch.setenv("HARNESS_CORPUS_STREAM", "0")  # read_string_columns, then a background write
    opened = _opens(monkeypatch)
    monkeypatch.setattr(corpus_cache, "content_sha256", lambda p: pytest.fail("decompressed a second time"))
    cold = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert len(cold) == 400 and cold.fingerprint == corpus_cache.fingerprint(text_sha)
    assert opened == ["corpus.jsonl.gz"]  # one decompression (before: a second one by content_sha256)
    memo = json.loads(corpus_cache._memo_path(path).read_text(encoding="utf-8"))
    assert memo["content_sha256"] == text_sha and memo["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [p.name for p in cache_root.joinpath("corpora").glob("*.arrow")] == [f"{text_sha}-v{corpus_cache.FORMAT}.arrow"]
    # warm: nothing read, nothing hashed
    monkeypatch.setattr(corpus_cache, "sha256", lambda p: pytest.fail("hashed on a warm load"))
    warm = load_corpus(path, cache=True)
    assert opened == ["corpus.jsonl.gz"] and warm._mapping is not None and warm.fingerprint == cold.fingerprint


@pytest.mark.parametrize("odd", ["blank-line", "number-title"])
def test_a_corpus_the_fast_parse_refuses_gets_the_same_content_checksum(tmp_path, cache_root, monkeypatch, odd):
    """A blank line between two objects: _ObjectBlocks refuses the fast parse at that read (its reads stop there),
    the line scan reads the corpus, so no parse read the file whole and content_sha256 hashes it, once. A number
    as title: pyarrow refuses the table (whatever it read); the checksum is the same either way."""
    extra = "\n" if odd == "blank-line" else json.dumps({"_id": "n", "title": 5, "text": "x"}) + "\n"
    text = ("".join(LINES[:200]) + extra + "".join(LINES[200:])).encode()
    path = _gz(tmp_path, text)
    hashed = []
    monkeypatch.setattr(corpus_cache, "content_sha256", lambda p: hashed.append(Path(p).name) or content_sha256(p))
    corpus = load_corpus(path, cache=True)
    assert len(corpus) == (400 if odd == "blank-line" else 401)
    if odd == "blank-line":
        assert hashed == ["corpus.jsonl.gz"]
    assert corpus.fingerprint == corpus_cache.fingerprint(hashlib.sha256(text).hexdigest())
    memo = json.loads(corpus_cache._memo_path(path).read_text(encoding="utf-8"))
    assert memo["content_sha256"] == hashlib.sha256(text).hexdigest()


def test_only_a_read_to_the_end_of_the_file_gives_a_digest(tmp_path, monkeypatch):
    path = _gz(tmp_path, "".join(LINES * 20).encode())
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 1 << 14)  # (many blocks: a stream stopped at its first is partial)
    whole = hashlib.sha256("".join(LINES * 20).encode()).hexdigest()
    with jsonl.ContentDigest(path) as parsed:
        assert jsonl.read_string_columns(path, COLUMNS).num_rows == 8000
    assert parsed.hexdigest == whole

    class Stop(Exception):
        pass

    def stop(batch):
        raise Stop
    with jsonl.ContentDigest(path) as parsed, pytest.raises(Stop):
        jsonl.stream_string_columns(path, COLUMNS, stop)
    assert parsed.hexdigest is None  # the stream stopped before the end of the file
    with jsonl.ContentDigest(path) as parsed:
        assert jsonl.stream_string_columns(path, COLUMNS, lambda batch: None)
    assert parsed.hexdigest == whole
    with jsonl.ContentDigest(tmp_path / "other.jsonl.gz") as parsed:  # another file's digest takes nothing
        assert jsonl.stream_string_columns(path, COLUMNS, lambda batch: None)
    assert parsed.hexdigest is None
    refused = _gz(tmp_path, "".join(LINES).encode() + b"null\n" + "".join(LINES).encode())
    with jsonl.ContentDigest(refused) as parsed:
        assert jsonl.read_string_columns(refused, COLUMNS) is None
    assert parsed.hexdigest is None  # refused half-way: its reads stopped there


def test_a_truncated_gz_is_one_line_and_nothing_is_remembered(tmp_path, cache_root):
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress("".join(LINES).encode(), mtime=0)[:-40])
    with pytest.raises(InputError) as raised:
        load_corpus(path, cache=True)
    assert str(raised.value).startswith(f"{path}: cannot read file: ") and "\n" not in str(raised.value)
    assert not corpus_cache._memo_path(path).exists()


def test_a_gz_written_during_its_cold_load_is_not_remembered(tmp_path, cache_root, monkeypatch):
    """The checksums are remembered only when the file's stat is the one taken before the parse read it."""
    import harness.datasets.beir as beir

    text = "".join(LINES).encode()
    path = _gz(tmp_path, text)
    real = beir._stream_corpus

    def then_touched(p, write):
        done = real(p, write)
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        return done
    monkeypatch.setattr(beir, "_stream_corpus", then_touched)
    corpus = load_corpus(path, cache=True)
    assert corpus.fingerprint == corpus_cache.fingerprint(hashlib.sha256(text).hexdigest())
    assert not corpus_cache._memo_path(path).exists()
