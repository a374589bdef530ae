"""A parsed-corpus cache file records the pyarrow that parsed it (its Arrow metadata ``harness.versions``,
written by :func:`harness.versions.computed_with`), the corpus mapped from it reports it
(``Corpus.parsed_with``), and a load that maps a file another pyarrow parsed says so in one warning line
(``load_dataset``'s ``warnings``: metrics.json's, printed by ``harness run``), as a reused BM25 index or
embedding entry does (tests/retrievers/test_bm25_index_versions_s20prov.py).

No version is in the corpus cache's key (an upgrade of pyarrow parses nothing again; FORMAT guards what a file
holds), so after ``pip install -U pyarrow`` a run mapped the corpus the old pyarrow parsed with no word of it.
Versions are faked by replacing ``harness.versions.versions``; the expected values are the fake ones."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import harness.versions
from harness.datasets import corpus_cache, load_dataset
from harness.datasets.corpus import COLUMNS, Corpus

REAL = harness.versions.versions()
WARNING = ("dataset: cached work computed under other library versions was reused (corpus_versions pyarrow 1.0 "
           "(this process: 2.0)): versions are in no cache key; purge the corpora cache (harness cache purge "
           "corpora) to parse it again")


@pytest.fixture(autouse=True)
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 0)  # (a corpus this small is cached too)
    monkeypatch.delenv(corpus_cache.VERIFY_ENV, raising=False)
    return tmp_path / "cache"


def _pyarrow(monkeypatch, version: str) -> None:
    fake = {**REAL, "pyarrow": version}
    monkeypatch.setattr(harness.versions, "versions", lambda: dict(fake))


def _folder(tmp_path):
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n"
                                                 for i in range(5)))
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "text"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    return folder


def _metadata(cache_root) -> dict:
    (file,) = (cache_root / "corpora").glob("*.arrow")
    with pa.memory_map(str(file)) as source:
        return pa.ipc.open_file(source).schema.metadata


@pytest.mark.parametrize("stream", ["1", "0"])  # parsed batch by batch into the file; parsed whole, then written
def test_a_corpus_parsed_by_pyarrow_1_and_mapped_by_2_reports_1_and_warns_once(tmp_path, cache_root, monkeypatch,
                                                                              stream):
    monkeypatch.setenv("HARNESS_CORPUS_STREAM", stream)
    folder = _folder(tmp_path)
    _pyarrow(monkeypatch, "1.0")
    cold = load_dataset(str(folder))
    corpus_cache.wait()
    assert cold.warnings == []
    assert _metadata(cache_root)[b"harness.versions"] == b'{"pyarrow": "1.0"}'

    _pyarrow(monkeypatch, "2.0")  # pip install -U pyarrow
    monkeypatch.setattr("harness.datasets.beir._parse_corpus", lambda p: pytest.fail("parsed again"))
    warm = load_dataset(str(folder))
    assert warm.corpus._mapping is not None and warm.corpus.parsed_with == {"pyarrow": "1.0"}  # 1.0, not 2.0
    assert warm.warnings == [WARNING]
    assert list(warm.corpus.texts) == [f"text {i}" for i in range(5)]


def test_a_corpus_mapped_under_the_same_pyarrow_gives_no_warning(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    _pyarrow(monkeypatch, "1.0")
    load_dataset(str(folder))
    corpus_cache.wait()
    warm = load_dataset(str(folder))
    assert warm.corpus._mapping is not None and warm.corpus.parsed_with == {"pyarrow": "1.0"}
    assert warm.warnings == []


def test_a_file_written_before_versions_were_recorded_is_mapped_with_none_and_no_warning(tmp_path, cache_root,
                                                                                        monkeypatch):
    folder = _folder(tmp_path)
    _pyarrow(monkeypatch, "1.0")
    load_dataset(str(folder))
    corpus_cache.wait()
    (file,) = (cache_root / "corpora").glob("*.arrow")
    table = pa.ipc.open_file(pa.BufferReader(file.read_bytes())).read_all()  # (in memory: the file is rewritten)
    old = {k: v for k, v in table.schema.metadata.items() if k != b"harness.versions"}  # as an older harness wrote
    with pa.OSFile(str(file), "wb") as sink, pa.ipc.new_file(sink, table.schema.with_metadata(old)) as writer:
        writer.write_table(table.replace_schema_metadata(old))
    _pyarrow(monkeypatch, "2.0")
    monkeypatch.setattr("harness.datasets.beir._parse_corpus", lambda p: pytest.fail("parsed again"))
    warm = load_dataset(str(folder))
    assert warm.corpus._mapping is not None and warm.corpus.parsed_with is None and warm.warnings == []


def test_a_keyed_corpus_records_its_pyarrow_too(monkeypatch):
    """ir_datasets collections (``load_keyed``: ``keyed-*.arrow``) are streamed into the cache as a folder's
    corpus is."""
    batch = pa.record_batch([pa.array(["d1", "d2"]), pa.array(["", ""]), pa.array(["one", "two"])], names=COLUMNS)

    def stream(write):
        write(batch)
        return "ab" * 32
    _pyarrow(monkeypatch, "1.0")
    table, mapping, _ = corpus_cache.load_keyed("k", COLUMNS, stream)
    assert Corpus.from_table(table, mapping).parsed_with == {"pyarrow": "1.0"}
    _pyarrow(monkeypatch, "2.0")
    table, mapping, _ = corpus_cache.load_keyed("k", COLUMNS, lambda write: pytest.fail("read again"))
    assert Corpus.from_table(table, mapping).parsed_with == {"pyarrow": "1.0"}


def test_harness_run_prints_the_warning(tmp_path, monkeypatch, harness_cli):
    folder = _folder(tmp_path)
    _pyarrow(monkeypatch, "1.0")
    load_dataset(str(folder))
    corpus_cache.wait()
    _pyarrow(monkeypatch, "2.0")
    out = tmp_path / "out"
    done = harness_cli("run", "-d", folder, "-r", "bm25", "-o", out, "--k", "1")
    assert done.returncode == 0, done.stderr
    assert f"warning: {WARNING}\n" in done.stderr
    assert json.loads((out / "ds" / "bm25" / "metrics.json").read_text())["warnings"] == [WARNING]


def test_metrics_json_records_the_pyarrow_that_parsed_the_cached_corpus(tmp_path, monkeypatch):
    """metrics.json's ``dataset`` block carries ``parsed_with`` (only the warning did): a run that maps a corpus
    pyarrow 1.0 parsed records 1.0 under pyarrow 2.0; a corpus too small to be cached (parsed in RAM) has none."""
    from harness.experiment import dataset_info

    folder = _folder(tmp_path)
    _pyarrow(monkeypatch, "1.0")
    load_dataset(str(folder))
    corpus_cache.wait()
    _pyarrow(monkeypatch, "2.0")
    info = dataset_info(load_dataset(str(folder)))
    assert info["parsed_with"] == {"pyarrow": "1.0"}
    assert list(info)[-3:] == ["parsed_with", "n_docs", "n_queries"]
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1 << 40)  # (not cached: parsed in RAM, no file to record)
    other = tmp_path / "other"
    other.mkdir()
    small = _folder(other)
    assert "parsed_with" not in dataset_info(load_dataset(str(small)))
