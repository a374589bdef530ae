"""pyarrow.json parses in blocks of BLOCK_BYTES (2 MiB), and refuses a file where a line runs on past the
block after its own ("straddling object straddles two block boundaries"). Such a file (a document of
several MiB) is parsed again in blocks of LARGE_BLOCK_BYTES, not left to the line scan (json.loads per line,
~10x slower): the whole parse and the streamed one (which falls back to the whole parse) alike. Here the
blocks are 4 KiB and the long document 40 KB."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from harness.datasets import beir, corpus_cache, jsonl
from harness.datasets.beir import load_corpus


@pytest.fixture
def small_blocks(monkeypatch, tmp_path):
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(jsonl, "LARGE_BLOCK_BYTES", 1 << 20, raising=False)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(corpus_cache.VERIFY_ENV, raising=False)
    monkeypatch.delenv(beir.STREAM_ENV, raising=False)

    def no_line_scan(path):
        raise AssertionError(f"the line scan read {path}")

    monkeypatch.setattr(beir, "_scan_corpus", no_line_scan)
    yield
    corpus_cache.wait()


def _corpus_file(tmp_path, long_at: int = 150):
    rows = [{"_id": f"d{i}", "title": f"title {i}", "text": ("long " * 8000 if i == long_at else f"text {i} ") + "end"}
            for i in range(300)]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_a_line_longer_than_two_blocks_is_parsed_in_larger_blocks(small_blocks, tmp_path):
    path, rows = _corpus_file(tmp_path)
    assert len("long " * 8000) > 2 * jsonl.BLOCK_BYTES
    table = jsonl.read_string_columns(path, ("_id", "title", "text"))
    assert table is not None and table.num_rows == 300
    assert table.column("text").to_pylist() == [r["text"] for r in rows]


@pytest.mark.parametrize("gz", [False, True])
def test_a_cached_corpus_with_a_long_line_loads_and_is_cached(small_blocks, tmp_path, gz):
    """The stream is refused at the long line; the whole parse takes larger blocks; the file is cached under
    the content's sha256 (a .gz's taken from the bytes of the read that reached the end)."""
    path, rows = _corpus_file(tmp_path)
    content = hashlib.sha256(path.read_bytes()).hexdigest()
    if gz:
        path = path.with_suffix(".jsonl.gz")
        path.write_bytes(gzip.compress((tmp_path / "corpus.jsonl").read_bytes()))
        (tmp_path / "corpus.jsonl").unlink()
    corpus = load_corpus(path, cache=True)
    assert corpus.ids == [r["_id"] for r in rows] and list(corpus.texts) == [r["text"] for r in rows]
    corpus_cache.wait()
    cached = [p.name for p in (tmp_path / "cache" / "corpora").glob("*.arrow")]
    assert cached == [f"{content}-v{corpus_cache.FORMAT}.arrow"]  # (cached for the next run, under its content)
    assert load_corpus(path, cache=True).ids == corpus.ids  # (the next load maps it)


def test_other_refusals_are_not_tried_again(monkeypatch, tmp_path):
    """A refusal for anything but a long line (here a number where a string belongs) is not parsed again."""
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 4096)
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"d{i}", "text": i if i == 7 else "t"}) + "\n" for i in range(50)))
    reads = []
    real = jsonl.open_binary
    monkeypatch.setattr(jsonl, "open_binary", lambda p: reads.append(p) or real(p))
    assert jsonl.read_string_columns(path, ("_id", "text")) is None and len(reads) == 1
