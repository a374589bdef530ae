"""The corpus cache for ``irds:<id>`` collections (harness/datasets/irds.py ``_docs_key``,
harness/datasets/corpus_cache.py ``load_keyed``): the documents are read from ir_datasets once, then
memory-mapped from ``<cache>/corpora/keyed-<content sha256>-v3.arrow`` while the files ir_datasets reads
them from (its documents file, or its docstore) are unchanged. Before, every load streamed the whole
collection through ``docs_iter()`` again (8.8M MS MARCO passages in Python, every run).

On datasets registered locally (no network), as tests/datasets/test_irds.py does."""

from __future__ import annotations

import uuid

import pytest

ir_datasets = pytest.importorskip("ir_datasets", reason="the irds extra (ir_datasets) is not installed")

from ir_datasets.datasets.base import Dataset as IrdsDataset  # noqa: E402
from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc  # noqa: E402
from ir_datasets.formats import GenericDoc, GenericQuery, TsvDocs, TsvQueries, TrecQrels  # noqa: E402
from ir_datasets.util import GzipExtract, LocalDownload  # noqa: E402

from harness.datasets import corpus_cache, irds, load_dataset  # noqa: E402
from harness.errors import HarnessError  # noqa: E402


@pytest.fixture(autouse=True)
def homes(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(corpus_cache.VERIFY_ENV, raising=False)


def _register_beir(folder) -> str:
    name = f"harness-test/{uuid.uuid4().hex[:8]}"

    def local(file):
        return GzipExtract(LocalDownload(folder / file, mkdir=False))
    ir_datasets.registry.register(name, IrdsDataset(
        BeirDocs(name, local("corpus.jsonl.gz"), BeirTitleDoc), BeirQueries(name, local("queries.jsonl.gz"), GenericQuery),
        BeirQrels(LocalDownload(folder / "qrels" / "test.tsv", mkdir=False), {})))
    return name


def _register_tsv(folder, docs: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.tsv").write_text(docs)
    (folder / "queries.tsv").write_text("q1\tone\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(
        TsvDocs(LocalDownload(folder / "docs.tsv", mkdir=False), GenericDoc),
        TsvQueries(LocalDownload(folder / "queries.tsv", mkdir=False), GenericQuery),
        TrecQrels(LocalDownload(folder / "qrels.txt", mkdir=False), {})))
    return name


def _no_reading(monkeypatch, cls):
    def refuse(self):
        raise AssertionError("the documents were read from ir_datasets again")
    monkeypatch.setattr(cls, "docs_iter", refuse)


def test_scifact_is_read_once_then_mapped(scifact_dir, monkeypatch):
    irds_id = _register_beir(scifact_dir)
    first = load_dataset(f"irds:{irds_id}")
    _no_reading(monkeypatch, BeirDocs)
    second = load_dataset(f"irds:{irds_id}")
    folder = load_dataset(str(scifact_dir))
    # SciFact's 5,183 documents (shared/datasets/scifact/PROVENANCE.md), as the folder loader reads them
    assert len(second.corpus) == 5183 and second.corpus._mapping is not None
    assert second.corpus.ids == folder.corpus.ids
    assert list(second.corpus.titles) == list(folder.corpus.titles)
    assert list(second.corpus.texts) == list(folder.corpus.texts)
    # the content's sha256 (files) and fingerprint are those of the read that made the cache
    assert second.files == first.files and second.corpus.fingerprint == first.corpus.fingerprint


def test_the_cached_and_uncached_loads_record_the_same_content(scifact_dir, monkeypatch):
    irds_id = _register_beir(scifact_dir)
    cached = load_dataset(f"irds:{irds_id}")
    monkeypatch.setattr(irds, "CACHE_MIN_BYTES", 1 << 62)  # not cached: read into memory, as before
    uncached = load_dataset(f"irds:{irds_id}")
    assert uncached.corpus._mapping is None
    assert cached.files == uncached.files and cached.corpus.fingerprint == uncached.corpus.fingerprint


def test_a_changed_documents_file_is_read_again(tmp_path):
    irds_id = _register_tsv(tmp_path / "c", "d1\tfirst text\nd2\tsecond text\n")
    assert list(load_dataset(f"irds:{irds_id}").corpus.texts) == ["first text", "second text"]
    (tmp_path / "c" / "docs.tsv").write_text("d1\tedited text\nd2\tsecond text\n")
    again = load_dataset(f"irds:{irds_id}")
    assert list(again.corpus.texts) == ["edited text", "second text"] and again.corpus._mapping is not None


def test_verify_full_reads_the_documents_again(tmp_path, monkeypatch):
    irds_id = _register_tsv(tmp_path / "c", "d1\tfirst text\n")
    load_dataset(f"irds:{irds_id}")
    monkeypatch.setenv(corpus_cache.VERIFY_ENV, "full")
    _no_reading(monkeypatch, TsvDocs)
    with pytest.raises(HarnessError, match="the documents were read from ir_datasets again"):
        load_dataset(f"irds:{irds_id}")


def test_a_duplicate_id_is_refused_and_not_cached(tmp_path):
    irds_id = _register_tsv(tmp_path / "c", "d1\tone\nd1\ttwo\n")
    for _ in range(2):  # the second load reads the documents again and refuses them again
        with pytest.raises(HarnessError, match=f"^irds:{irds_id}: duplicate document id 'd1'$"):
            load_dataset(f"irds:{irds_id}")
    assert not list((tmp_path / "cache" / "corpora").glob("keyed-*.arrow"))
