"""irds:<id> datasets through ir_datasets, on datasets registered locally (no network): BEIR's
components (``ir_datasets.datasets.beir``: BeirDocs / BeirQueries / BeirQrels, as ir_datasets models
``beir/scifact/test``) pointed at local files."""

from __future__ import annotations

import gzip
import json
import uuid

import pytest

ir_datasets = pytest.importorskip("ir_datasets", reason="the irds extra (ir_datasets) is not installed")

from ir_datasets.datasets.base import Dataset as IrdsDataset  # noqa: E402
from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc  # noqa: E402
from ir_datasets.formats import GenericQuery, TrecQrels  # noqa: E402
from ir_datasets.util import GzipExtract, LocalDownload  # noqa: E402

from harness.datasets import DatasetRef, load_dataset  # noqa: E402
from harness.errors import HarnessError  # noqa: E402


@pytest.fixture(autouse=True)
def irds_home(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))  # its docstores go here


def _register_beir(folder, gz: bool) -> str:
    """Register ``folder`` (BEIR layout) under a fresh id, as ir_datasets registers beir/<name>/test."""
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    suffix = ".gz" if gz else ""

    def local(file):
        download = LocalDownload(folder / file, mkdir=False)
        return GzipExtract(download) if gz else download

    ir_datasets.registry.register(name, IrdsDataset(
        BeirDocs(name, local(f"corpus.jsonl{suffix}"), BeirTitleDoc),
        BeirQueries(name, local(f"queries.jsonl{suffix}"), GenericQuery),
        BeirQrels(LocalDownload(folder / "qrels" / "test.tsv", mkdir=False), {})))
    return name


def test_irds_prefix_is_parsed_once():
    ref = DatasetRef.parse("irds:msmarco-passage/dev/small")
    assert (ref.irds_id, ref.hf_repo, ref.remote, ref.info) == ("msmarco-passage/dev/small", None, "irds", None)
    assert DatasetRef.parse("scifact").irds_id is None


def test_irds_scifact_matches_the_folder_loader(scifact_dir):
    folder_ds = load_dataset(str(scifact_dir))
    irds_id = _register_beir(scifact_dir, gz=True)
    ds = load_dataset(f"irds:{irds_id}")
    # the same collection by two roads: counts in shared/datasets/scifact/PROVENANCE.md (5183 docs,
    # 300 judged test queries, 339 judgments)
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (5183, 300, 339)
    assert ds.corpus.ids == folder_ds.corpus.ids
    assert list(ds.corpus.titles) == list(folder_ds.corpus.titles)
    assert list(ds.corpus.texts) == list(folder_ds.corpus.texts)
    assert ds.queries.as_dict() == folder_ds.queries.as_dict()
    assert ds.qrels.to_dict() == folder_ds.qrels.to_dict()
    assert ds.name == irds_id and ds.load_s > 0 and ds.warnings == []


def test_irds_streams_batches_into_arrow(tmp_path, monkeypatch):
    from harness.datasets import irds

    monkeypatch.setattr(irds, "BATCH_DOCS", 2)
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"T{i}" if i % 2 else "", "text": f"text {i}"} for i in range(5)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "text 3"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t2\nq1\td9\t1\n")
    ds = load_dataset(f"irds:{_register_beir(folder, gz=False)}")
    assert ds.corpus.table.column("text").num_chunks == 3  # batches of 2, 2 and 1 documents
    assert ds.corpus.ids == [f"d{i}" for i in range(5)] and list(ds.corpus.titles) == ["", "T1", "", "T3", ""]
    assert ds.queries.as_dict() == {"q1": "text 3"} and ds.qrels.to_dict() == {"q1": {"d3": 2, "d9": 1}}
    assert ds.warnings == ["1 judgment(s) name documents missing from the corpus"]


def test_irds_duplicate_document_id_is_named(tmp_path):
    folder = tmp_path / "dup"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": "x"}) + "\n"
                                                 for i in ("a", "b", "a")))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    irds_id = _register_beir(folder, gz=False)
    with pytest.raises(HarnessError, match=f"^irds:{irds_id}: duplicate document id 'a'$"):
        load_dataset(f"irds:{irds_id}")


def test_unknown_irds_id_is_one_clear_error():
    with pytest.raises(HarnessError, match="ir_datasets knows no dataset 'no-such/dataset'"):
        load_dataset("irds:no-such/dataset")


def test_irds_id_without_qrels_is_refused():
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(TrecQrels(LocalDownload("/nonexistent", mkdir=False), {})))
    with pytest.raises(HarnessError, match="has no docs, queries"):
        load_dataset(f"irds:{name}")


def test_gzip_and_plain_give_the_same(tmp_path):
    folder = tmp_path / "g"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "d1", "title": "t", "text": "x"}\n'))
    (folder / "queries.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "q1", "text": "x"}\n'))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    ds = load_dataset(f"irds:{_register_beir(folder, gz=True)}")
    assert (ds.corpus.ids, ds.corpus.titles[0], ds.corpus.texts[0]) == (["d1"], "t", "x")
