"""The on-disk index cache: a second run loads it; a damaged entry is detected and rebuilt."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.checksums import sha256
from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever
from retrievers.bm25 import cache as index_cache

CORPUS = Corpus([f"d{i}" for i in range(50)], [f"title {i % 7}" for i in range(50)],
                [f"doc {i} about topic{i % 5} and item{i % 11} and item{i % 3}" for i in range(50)])
QUERIES = Queries(["q1", "q2", "q3"], ["topic1 item2", "title 3", "item0 topic4 doc"])


def run_once(cache_dir, **kw):
    r = BM25Retriever(cache_dir=cache_dir, **kw)
    r.index(CORPUS)
    return r.backend.cache_status, r.search(QUERIES, 10).to_dict()


def entry(cache_dir):
    (folder,) = (cache_dir / "bm25").iterdir()
    return folder


def test_second_run_loads_the_cache(tmp_path):
    status, first = run_once(tmp_path)
    assert status == "built"
    status, second = run_once(tmp_path)
    assert status == "hit" and second == first
    manifest = json.loads((entry(tmp_path) / "manifest.json").read_text())
    assert set(manifest["files"]) == {"terms.txt", "indptr.npy", "indices.npy", "data.npy", "doc_lengths.npy"}
    assert not [p for p in (tmp_path / "bm25").iterdir() if p.name.endswith(".tmp")]  # no temp folder left


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "delete a file", "bad manifest", "extra file",
                                    "document out of range", "indptr not ascending"])
def test_damaged_cache_is_rebuilt_with_identical_results(tmp_path, damage):
    _, first = run_once(tmp_path)
    folder = entry(tmp_path)
    data = folder / "data.npy"
    if damage == "flip a byte":
        raw = bytearray(data.read_bytes())
        raw[-3] ^= 0xFF
        data.write_bytes(bytes(raw))
    elif damage == "truncate":
        data.write_bytes(data.read_bytes()[:40])
    elif damage == "delete a file":
        (folder / "terms.txt").unlink()
    elif damage == "bad manifest":
        (folder / "manifest.json").write_text("{not json")
    elif damage == "extra file":
        (folder / "stray.npy").write_bytes(b"x")
    else:  # arrays that do not fit together, with checksums that match: SparseIndex.validate on load
        name = "indices" if damage == "document out of range" else "indptr"
        array = np.load(folder / f"{name}.npy")
        if name == "indices":
            array[0] = len(CORPUS)
        else:
            array[1], array[2] = array[2], array[1]
        np.save(folder / f"{name}.npy", array)
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["files"][f"{name}.npy"] = {"bytes": (folder / f"{name}.npy").stat().st_size,
                                           "sha256": sha256(folder / f"{name}.npy")}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(index_cache.CacheCorrupt, match="inconsistent arrays"):
            index_cache.load(tmp_path, folder.name)
    status, again = run_once(tmp_path)
    assert status == "rebuilt" and again == first
    status, third = run_once(tmp_path)
    assert status == "hit" and third == first


def test_key_depends_on_corpus_analyzer_and_parameters(tmp_path):
    run_once(tmp_path)
    run_once(tmp_path, k1=1.2)
    run_once(tmp_path, stemmer=None)
    r = BM25Retriever(cache_dir=tmp_path)
    r.index(Corpus(CORPUS.ids, CORPUS.titles, CORPUS.texts[:-1] + ["changed text"]))
    assert r.backend.cache_status == "built"
    assert len(list((tmp_path / "bm25").iterdir())) == 4


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "env"))
    assert index_cache.cache_root() == tmp_path / "env"
    assert index_cache.cache_root(tmp_path / "explicit") == tmp_path / "explicit"
    status, _ = run_once(None)
    assert status == "built" and (tmp_path / "env" / "bm25").is_dir()


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    status, _ = run_once(None, cache=False)
    assert status == "off" and not (tmp_path / "bm25").exists()
