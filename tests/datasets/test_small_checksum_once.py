"""A small corpus.jsonl.gz (under corpus_cache.MIN_BYTES, so not remembered on disk) is gunzipped for its content
checksum once per load, not twice (harness.datasets.corpus_cache._small_checksum).

Since the content became the corpus's identity, load_dataset asked for it twice, for the corpus's fingerprint
and for Dataset.content: SciFact's 2.7 MB corpus.jsonl.gz was decompressed and hashed twice per load (~18 ms
each). Now once per process while the file's stat is unchanged; a rewritten file is hashed again, and
HARNESS_CORPUS_VERIFY=full still hashes on every call."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from harness.datasets import corpus_cache, load_dataset


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    docs = "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"w{i}"}) + "\n" for i in range(3))
    (tmp_path / "ds" / "corpus.jsonl.gz").write_bytes(gzip.compress(docs.encode(), mtime=0))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "w1"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return tmp_path / "ds", docs


def _counted(monkeypatch):
    calls = []
    real = corpus_cache.content_sha256

    def counting(path):
        calls.append(str(path))
        return real(path)
    monkeypatch.setattr(corpus_cache, "content_sha256", counting)
    return calls


def test_one_load_gunzips_the_corpus_once(folder, monkeypatch):
    ds_folder, docs = folder
    calls = _counted(monkeypatch)
    dataset = load_dataset(ds_folder)
    assert calls == [str(ds_folder / "corpus.jsonl.gz")]  # (twice before)
    assert dataset.content["corpus.jsonl"] == hashlib.sha256(docs.encode()).hexdigest()
    assert dataset.corpus.fingerprint == corpus_cache.fingerprint(hashlib.sha256(docs.encode()).hexdigest())


def test_a_rewritten_file_is_hashed_again_and_verify_full_hashes_every_time(folder, monkeypatch):
    ds_folder, docs = folder
    calls = _counted(monkeypatch)
    load_dataset(ds_folder)
    more = docs + json.dumps({"_id": "d9", "title": "", "text": "w9"}) + "\n"
    (ds_folder / "corpus.jsonl.gz").write_bytes(gzip.compress(more.encode(), mtime=0))
    assert load_dataset(ds_folder).content["corpus.jsonl"] == hashlib.sha256(more.encode()).hexdigest()
    assert len(calls) == 2
    monkeypatch.setenv("HARNESS_CORPUS_VERIFY", "full")
    load_dataset(ds_folder)
    assert len(calls) == 4
