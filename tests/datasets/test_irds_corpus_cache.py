"""The corpus cache for ``irds:<id>`` collections (harness/datasets/irds.py ``_docs_key``,
harness/datasets/corpus_cache.py ``load_keyed``): the documents are read from ir_datasets once, then
memory-mapped from ``<cache>/corpora/keyed-<content sha256>-v3.arrow`` while the files ir_datasets reads
them from (its documents file, or its docstore) are unchanged. Before, every load streamed the whole
collection through ``docs_iter()`` again (8.8M MS MARCO passages in Python, every run).

On datasets registered locally (no network), as tests/datasets/test_irds.py does."""

from __future__ import annotations

import gzip
import json
import shutil
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


def test_a_stale_docstore_removed_is_read_again(tmp_path):
    # ir_datasets' TsvDocs.docs_iter() reads its docstore (docs.tsv.pklz4) once one is built (e.g. by a
    # docs_store() lookup), not the file: edited after that, the file is not what ir_datasets serves, until
    # the docstore is removed. The cache was keyed on the file's stat alone: the load after the edit cached
    # the stale docstore's documents under the new stat, and once the docstore was removed they were still
    # served ('first text') where ir_datasets itself (the oracle: an uncached docs_iter()) reads the file.
    irds_id = _register_tsv(tmp_path / "c", "d1\tfirst text\nd2\tsecond text\n")
    load_dataset(f"irds:{irds_id}")
    ir_datasets.load(irds_id).docs_store().build()
    (tmp_path / "c" / "docs.tsv").write_text("d1\tedited text\nd2\tsecond text\n")
    served = [doc.text for doc in ir_datasets.load(irds_id).docs_iter()]
    assert served == ["first text", "second text"]  # (ir_datasets: the docstore, stale)
    assert list(load_dataset(f"irds:{irds_id}").corpus.texts) == served
    shutil.rmtree(tmp_path / "c" / "docs.tsv.pklz4")
    served = [doc.text for doc in ir_datasets.load(irds_id).docs_iter()]
    assert served == ["edited text", "second text"]  # (ir_datasets: the file again)
    again = load_dataset(f"irds:{irds_id}")
    assert list(again.corpus.texts) == served and again.corpus._mapping is not None


def _read_only(monkeypatch, folder):
    """``folder`` as on a read-only mount (seen on a tmpfs mounted ``ro``): creating a file fails with EROFS,
    and so does removing one, also one that is not there (``Path.unlink(missing_ok=True)`` raises it)."""
    import errno
    import os

    real_open, real_unlink = os.open, os.unlink

    def refuse(path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    def open_(path, flags, *args, **kwargs):
        if str(path).startswith(str(folder)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def unlink(path, *args, **kwargs):
        if str(path).startswith(str(folder)):
            refuse(path)
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "unlink", unlink)


def test_a_read_only_cache_loads_the_documents_into_memory(tmp_path, monkeypatch):
    # A read-only cache folder (a shared cache mounted ro) that holds a corpora folder but not this
    # collection: the temporary file cannot be created, and removing it in the clean-up raised EROFS,
    # so the load failed ('irds:...: ir_datasets could not provide it: OSError: [Errno 30] Read-only
    # file system: .../corpora/.stream....tmp') instead of reading the documents into memory.
    irds_id = _register_tsv(tmp_path / "c", "d1\tfirst text\nd2\tsecond text\n")
    (tmp_path / "cache" / "corpora").mkdir(parents=True)
    _read_only(monkeypatch, tmp_path / "cache")
    loaded = load_dataset(f"irds:{irds_id}")
    assert list(loaded.corpus.texts) == ["first text", "second text"] and loaded.corpus._mapping is None
    monkeypatch.undo()
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    cached = load_dataset(f"irds:{irds_id}")  # writable again: cached, with the same content recorded
    assert cached.corpus._mapping is not None
    assert cached.files == loaded.files and cached.corpus.fingerprint == loaded.corpus.fingerprint


def _tiny_beir(folder):
    """A BEIR folder of 50 documents ('d0'..'d49'), one query, one judgment."""
    (folder / "qrels").mkdir(parents=True)
    with gzip.open(folder / "corpus.jsonl.gz", "wt") as out:
        out.writelines(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(50))
    with gzip.open(folder / "queries.jsonl.gz", "wt") as out:
        out.write(json.dumps({"_id": "q1", "text": "one"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def _waits_signal(monkeypatch, event):
    """``event`` is set when a thread is about to wait for a build lock another holds (harness.atomic)."""
    from harness import atomic

    real = atomic._lock_exclusive

    def lock_exclusive(handle, on_wait=None):
        def waiting():
            event.set()
            if on_wait is not None:
                on_wait()
        return real(handle, waiting)
    monkeypatch.setattr(atomic, "_lock_exclusive", lock_exclusive)


def test_two_loads_do_not_build_one_docstore_at_once(tmp_path, monkeypatch):
    # ir_datasets builds a BEIR collection's docstore in place and unlocked; the cache key is taken from
    # the built docstore (its build forced first), and two processes loading one uncached collection
    # built it at the same time, leaving it corrupt for every later load (seen with two `harness` processes
    # on SciFact: 'ir_datasets could not provide it: ValueError: Invalid size: 0x2500100193', and, before
    # the cache, "duplicate document id '4983'"). Two loads on threads (flock locks two open files of one
    # process alike): the first to build holds its build until the other has started building too (the
    # failure: builds overlap) or waits for the lock, or has finished; no sleep decides it. The builds must not
    # overlap (the second waits for the first, then finds the docstore built).
    import threading

    irds_id = _register_beir(_tiny_beir(tmp_path / "beir"))
    original = BeirDocs._docs_iter
    state = {"active": 0, "most": 0}
    lock, moved = threading.Lock(), threading.Event()
    _waits_signal(monkeypatch, moved)

    def building(self):
        with lock:
            state["active"] += 1
            state["most"] = max(state["most"], state["active"])
            if state["active"] > 1:
                moved.set()
        assert moved.wait(120), "the other load neither built, nor waited for the lock, nor finished"
        try:
            yield from original(self)
        finally:
            with lock:
                state["active"] -= 1
    monkeypatch.setattr(BeirDocs, "_docs_iter", building)
    load, loaded, errors = _loader(irds_id, moved)
    threads = [threading.Thread(target=load) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(thread.is_alive() for thread in threads)
    assert state["most"] == 1 and not errors
    assert [len(d.corpus) for d in loaded] == [50, 50] and loaded[0].files == loaded[1].files


def _loader(irds_id: str, moved):
    """A thread target loading ``irds:<irds_id>`` (the datasets it loads, the exceptions it meets) that sets
    ``moved`` when it is done, whatever the outcome."""
    loaded, errors = [], []

    def load():
        try:
            loaded.append(load_dataset(f"irds:{irds_id}"))
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            moved.set()
    return load, loaded, errors


def test_a_load_does_not_read_the_docstore_another_is_building(tmp_path, monkeypatch):
    # ir_datasets' docs_store() (Lz4PickleLookup) reads the docstore's bin.meta, which a build creates empty
    # and then writes. The docstore's build lock was taken after docs_store(): a second load (thread or
    # process) that made it in that moment read '' (1 load in ~100 of two threads at once; the flaky
    # test_two_loads_do_not_build_one_docstore_at_once) and failed: 'irds:...: ir_datasets could not provide
    # it: AssertionError: fields do not match; you may need to re-build this store ...', or, once bin.meta
    # was written, read the documents unlocked and built the docstore beside the first. Here the first build
    # is held with bin.meta empty until the second load waits for the lock (or has finished); both loads
    # must give the 50 documents.
    import threading

    from ir_datasets.indices import lz4_pickle

    irds_id = _register_beir(_tiny_beir(tmp_path / "beir"))
    written, moved = threading.Event(), threading.Event()
    _waits_signal(monkeypatch, moved)
    real_open = open

    def open_(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        if str(path).endswith("bin.meta") and "w" in mode and not written.is_set():
            written.set()  # (created, empty)
            moved.wait(120)
        return handle
    monkeypatch.setattr(lz4_pickle, "open", open_, raising=False)
    load, loaded, errors = _loader(irds_id, moved)
    first = threading.Thread(target=load)
    first.start()
    assert written.wait(120), "ir_datasets wrote no bin.meta (its docstore changed: this test needs updating)"
    second = threading.Thread(target=load)
    second.start()
    first.join(300)
    second.join(300)
    assert not first.is_alive() and not second.is_alive()
    assert not errors
    assert [len(d.corpus) for d in loaded] == [50, 50] and loaded[0].files == loaded[1].files


def test_a_folder_of_trec_files_is_read_from_the_folder(tmp_path):
    # TrecDocs over a folder of TREC files (docs_path() is the folder): ir_datasets' docs_iter() reads the
    # files and builds no docstore. The cache key forced a docstore build (a copy of the collection beside
    # it), which docs_iter() then read instead of the folder: an edited file was no longer seen, by the
    # harness nor by ir_datasets ('second text' after the edit to 'edited text'). Oracle: ir_datasets'
    # docs_iter(), which reads the folder while no docstore is built.
    from ir_datasets.formats import TrecDocs

    folder = tmp_path / "trec"
    (folder / "docs").mkdir(parents=True)

    def write(name, doc_id, text):
        (folder / "docs" / name).write_text(f"<DOC>\n<DOCNO>{doc_id}</DOCNO>\n<TEXT>{text}</TEXT>\n</DOC>\n")
    write("a.txt", "d1", "first text")
    write("b.txt", "d2", "second text")
    (folder / "queries.tsv").write_text("q1\tone\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    irds_id = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(irds_id, IrdsDataset(
        TrecDocs(LocalDownload(folder / "docs", mkdir=False), parser="sax"),
        TsvQueries(LocalDownload(folder / "queries.tsv", mkdir=False), GenericQuery),
        TrecQrels(LocalDownload(folder / "qrels.txt", mkdir=False), {})))

    def served():
        return sorted(doc.default_text().strip() for doc in ir_datasets.load(irds_id).docs_iter())
    assert sorted(load_dataset(f"irds:{irds_id}").corpus.texts) == served() == ["first text", "second text"]
    write("b.txt", "d2", "edited text")
    assert served() == ["edited text", "first text"]
    assert sorted(load_dataset(f"irds:{irds_id}").corpus.texts) == served()
    assert not (folder / "docs.pklz4").exists()


def test_a_docstore_the_read_would_not_build_is_not_built(tmp_path):
    # KILT's, CAR's, Mr. TyDi's documents: no documents file (docs_path), and docs_iter() reads the docstore
    # only once it is built (ir_datasets' use_docstore). Building it for the cache key made a copy of the
    # collection that ir_datasets alone does not make (multi-GB for KILT): such a collection is read from
    # docs_iter() into memory, uncached, and no docstore is built.
    from ir_datasets.formats import BaseDocs
    from ir_datasets.indices import PickleLz4FullStore
    from ir_datasets.util import use_docstore

    docs = [GenericDoc("d1", "first text"), GenericDoc("d2", "second text")]

    class StoreOnceBuilt(BaseDocs):
        @use_docstore
        def docs_iter(self):
            return iter(docs)

        def docs_cls(self):
            return GenericDoc

        def docs_store(self, field="doc_id"):
            return PickleLz4FullStore(path=str(tmp_path / "docs.pklz4"), init_iter_fn=lambda: iter(docs),
                                      data_cls=GenericDoc, lookup_field=field, index_fields=["doc_id"])

    (tmp_path / "queries.tsv").write_text("q1\tone\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(
        StoreOnceBuilt(), TsvQueries(LocalDownload(tmp_path / "queries.tsv", mkdir=False), GenericQuery),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt", mkdir=False), {})))
    loaded = load_dataset(f"irds:{name}")
    assert list(loaded.corpus.texts) == ["first text", "second text"] and loaded.corpus._mapping is None
    assert not StoreOnceBuilt().docs_store().built()


def test_a_cached_collection_records_the_ir_datasets_that_read_it(tmp_path, monkeypatch):
    """The collection's cache file records the ir_datasets (and pyarrow) that read its documents, the
    corpus mapped from it reports them (metrics.json ``dataset.parsed_with``), and a load under another
    ir_datasets version says so once, as for a folder's corpus another pyarrow parsed; metrics.json's
    ``versions`` names ir_datasets too. Before, only pyarrow was recorded: an upgrade of ir_datasets, whose
    parsers make the documents, went unsaid. Versions are faked (harness.versions.versions)."""
    import harness.versions

    real = harness.versions.versions()
    assert "ir_datasets" in real and "ir_datasets" in harness.versions.recorded()

    def fake(version):
        monkeypatch.setattr(harness.versions, "versions", lambda: {**real, "ir_datasets": version, "pyarrow": "9.0"})
    irds_id = _register_tsv(tmp_path / "c", "d1\tfirst text\nd2\tsecond text\n")
    fake("0.5.0")
    cold = load_dataset(f"irds:{irds_id}")
    assert cold.warnings == []
    fake("0.6.3")
    _no_reading(monkeypatch, TsvDocs)
    warm = load_dataset(f"irds:{irds_id}")
    assert warm.corpus.parsed_with == {"ir_datasets": "0.5.0", "pyarrow": "9.0"}
    assert warm.warnings == ["dataset: cached work computed under other library versions was reused (corpus_versions "
                             "ir_datasets 0.5.0 (this process: 0.6.3)): versions are in no cache key; purge the corpora "
                             "cache (harness cache purge corpora) to parse it again"]
