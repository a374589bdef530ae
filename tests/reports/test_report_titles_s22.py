"""report.html's document titles come from the corpus as a run reads it (the corpus cache's Arrow file for a
large corpus), the wanted rows picked in Arrow, not from a line-by-line ``json.loads`` of the whole corpus
(~5 s of a benchmark's report.html at 1M documents)."""

from __future__ import annotations

import gzip
import json

import pytest

from harness.datasets import beir, corpus_cache
from harness.reports.html import model

DOCS = [{"_id": "d1", "title": "  A title ", "text": "ignored"},
        {"_id": "d2", "title": "", "text": "short   text\nhere"},
        {"_id": "d3", "title": None, "text": "word " * 40},
        {"_id": "d4", "title": "not wanted", "text": "x"},
        {"_id": "d5", "text": None}]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)  # (as a corpus of 32 MiB or more: the Arrow cache)
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(d) + "\n" for d in DOCS).encode(), mtime=0))
    yield path
    corpus_cache.wait()


def test_titles_of_the_wanted_documents_without_a_line_scan(corpus, monkeypatch):
    beir.load_corpus(corpus)  # (a run cached it)
    corpus_cache.wait()
    monkeypatch.setattr(beir, "iter_jsonl", lambda *a, **k: pytest.fail("the corpus was scanned line by line"))
    monkeypatch.setattr(corpus_cache, "content_sha256", lambda *a: pytest.fail("hashed again"))
    titles = model._corpus_titles(corpus, {"d1", "d2", "d3", "d5", "absent"})
    snippet = ("word " * 40).strip()[:model.SNIPPET - 1] + "…"
    assert titles == {"d1": "A title", "d2": "short text here", "d3": snippet, "d5": ""}
    assert len(titles["d3"]) == model.SNIPPET and model._corpus_titles(corpus, set()) == {}
