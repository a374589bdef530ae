"""Corpus caches written by earlier versions, read by this one (harness/datasets/corpus_cache.py).

Before the fast parse checked each line (c2a1cd9, 94bae1f), a corpus whose object is broken over a
lone CR (``{"_id": "x",<CR>"text": "y"}``) loaded as three documents, d0, x, d1, and a cached load
wrote them to ``<sha256 of the source>-v2.arrow``. The file is keyed by the source's bytes, which
have not changed, so with the format left at 2 this version mapped that file and served the three
documents of a source it refuses (reproduced with the harness of 1f129d1 writing the cache).

Expected value: the line scan's refusal (``harness.datasets.beir._parse_corpus``, ``json.loads`` per
line as BEIR's ``GenericDataLoader``): ``corpus.jsonl:2: malformed JSON``.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pytest

from harness.checksums import sha256
from harness.datasets import beir, corpus_cache
from harness.errors import InputError

DOCS = [json.dumps({"_id": f"d{i}", "title": "", "text": f"word {i}"}) for i in range(2)]


def write_v2_cache(cache_root, source, ids):
    """The file the harness of 1f129d1 wrote for ``source`` (a whole-table write: its metadata records
    the source's checksum and the row count, format 2)."""
    digest = sha256(source)
    folder = cache_root / "corpora"
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({"_id": ids, "title": [""] * len(ids), "text": [f"t {i}" for i in ids]})
    table = table.replace_schema_metadata({b"harness.source_sha256": digest.encode(),
                                           b"harness.rows": str(len(ids)).encode(), b"harness.format": b"2"})
    with pa.OSFile(str(folder / f"{digest}-v2.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def test_a_v2_cache_of_a_source_refused_now_is_not_served(tmp_path, monkeypatch):
    cache_root = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache_root))
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(f'{DOCS[0]}\n{{"_id": "x",\r"text": "y"}}\n{DOCS[1]}\n'.encode())
    write_v2_cache(cache_root, path, ["d0", "x", "d1"])
    with pytest.raises(InputError, match=r"corpus.jsonl:2: malformed JSON"):
        beir.load_corpus(path, cache=True)  # (was: the cached d0, x, d1)


def test_a_v2_cache_of_a_sound_source_is_parsed_again(tmp_path, monkeypatch):
    """A sound source's v2 file is passed over too: the corpus is the source's (not the file's rows),
    cached again under the current format, and its fingerprint (which keys the BM25 index cache)
    is not the one a v2 load gave."""
    cache_root = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache_root))
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    write_v2_cache(cache_root, path, ["stale"])
    corpus = beir.load_corpus(path, cache=True)
    corpus_cache.wait()
    assert list(corpus.ids) == ["d0", "d1"]
    v2_fingerprint = hashlib.sha256(f"corpus-jsonl v2 {sha256(path)}".encode()).hexdigest()
    assert corpus.fingerprint != v2_fingerprint
    assert (cache_root / "corpora" / f"{sha256(path)}-v{corpus_cache.FORMAT}.arrow").is_file()
