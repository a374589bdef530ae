"""irds:<id> review, second pass: what identifies an ir_datasets dataset's content in ``Dataset.files``
(the key of benchmark cells and pipeline stage caches), on datasets registered locally (no network)."""

from __future__ import annotations

import json
import uuid

import pytest

ir_datasets = pytest.importorskip("ir_datasets", reason="the irds extra (ir_datasets) is not installed")

from ir_datasets.datasets.base import Dataset as IrdsDataset  # noqa: E402
from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, GenericDoc, GenericQuery, TrecQrel  # noqa: E402

from harness.datasets import load_dataset  # noqa: E402


@pytest.fixture(autouse=True)
def irds_home(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))


class _Docs(BaseDocs):
    def __init__(self, items):
        self.items = items

    def docs_iter(self):
        return iter(self.items)

    def docs_cls(self):
        return GenericDoc


class _Queries(BaseQueries):
    def __init__(self, items):
        self.items = items

    def queries_iter(self):
        return iter(self.items)

    def queries_cls(self):
        return GenericQuery


class _Qrels(BaseQrels):
    def __init__(self, items):
        self.items = items

    def qrels_iter(self):
        return iter(self.items)

    def qrels_cls(self):
        return TrecQrel

    def qrels_defs(self):
        return {}


def _register():
    """A dataset whose content the test changes in place, under one id (as a local registration or
    user-supplied collection files change while the id stays): BM25 on 'apple' finds d1, the relevant one."""
    parts = (_Docs([GenericDoc("d1", "apple banana"), GenericDoc("d2", "cherry")]),
             _Queries([GenericQuery("q1", "apple")]), _Qrels([TrecQrel("q1", "d1", 1, "0")]))
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(*parts))
    return name, parts


def test_files_identify_the_content():
    """``files`` keeps the id and ir_datasets version and adds the sha256 of the documents, queries
    and qrels loaded: the same content gives the same entries, a changed document, query or grade
    changes its entry. (Formerly the id and version only, the same for any content.)"""
    name, (docs, queries, qrels) = _register()
    first = load_dataset(f"irds:{name}").files
    assert first[f"irds:{name}"] == f"ir_datasets {ir_datasets.__version__}"
    assert sorted(first) == sorted(f"irds:{name}{part}" for part in ("", "/docs", "/queries", "/qrels"))
    assert load_dataset(f"irds:{name}").files == first
    docs.items[1] = GenericDoc("d2", "cherries")
    second = load_dataset(f"irds:{name}").files
    assert [k for k in first if first[k] != second[k]] == [f"irds:{name}/docs"]
    queries.items[0] = GenericQuery("q1", "apples")
    qrels.items[0] = TrecQrel("q1", "d1", 2, "0")
    third = load_dataset(f"irds:{name}").files
    assert [k for k in first if second[k] != third[k]] == [f"irds:{name}/queries", f"irds:{name}/qrels"]


def test_changed_content_is_not_a_pipeline_cache_hit(tmp_path, harness_cli):
    """A pipeline stage's cached run is keyed on the dataset's ``files``: after the documents change
    under the same id, the stage is run again. Worked example: the relevant d1 becomes 'cherry', so BM25
    on 'apple' retrieves only d2 and NDCG@10 is 0 (formerly: cache hit, the old run, NDCG@10 1.0)."""
    name, (docs, _, _) = _register()
    (tmp_path / "p.toml").write_text('name = "p"\n[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n')

    def run():
        out = harness_cli("run", "-d", f"irds:{name}", "--pipeline", tmp_path / "p.toml", "-o", tmp_path / "out")
        assert out.returncode == 0, out.stderr
        metrics = json.loads((tmp_path / "out" / name / "p" / "metrics.json").read_text())["metrics"]
        return metrics["NDCG@10"], out.stdout

    assert run()[0] == 1.0
    docs.items[:] = [GenericDoc("d1", "cherry"), GenericDoc("d2", "apple banana")]
    ndcg, stdout = run()
    assert "stage bm25 (retrieve): cache miss" in stdout
    assert ndcg == 0.0


def test_changed_content_reruns_the_benchmark_cell(tmp_path, harness_cli):
    """A benchmark cell is reused when its fingerprint (dataset files, retriever, settings) is unchanged:
    changed documents under the same irds id run it again (formerly: reused, NDCG@10 1.0 kept)."""
    name, (docs, _, _) = _register()
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "b"\noutput_dir = "{tmp_path / "out"}"\n'
                      f'[[datasets]]\nname = "irds:{name}"\nlabel = "d"\n[[retrievers]]\ntype = "bm25"\n')
    metrics = tmp_path / "out" / "b" / "d" / "bm25" / "metrics.json"
    assert harness_cli("bench", config).returncode == 0
    assert json.loads(metrics.read_text())["metrics"]["NDCG@10"] == 1.0
    again = harness_cli("bench", config)
    assert again.returncode == 0 and "(0 run, 1 reused, 0 failed)" in again.stdout  # unchanged: reused
    docs.items[:] = [GenericDoc("d1", "cherry"), GenericDoc("d2", "apple banana")]
    changed = harness_cli("bench", config)
    assert changed.returncode == 0 and "(1 run, 0 reused, 0 failed)" in changed.stdout, changed.stdout
    assert json.loads(metrics.read_text())["metrics"]["NDCG@10"] == 0.0


class _TypedDocs(_Docs):
    def __init__(self, cls, items):
        super().__init__(items)
        self._cls = cls

    def docs_cls(self):
        return self._cls


def test_a_none_title_is_not_text(tmp_path):
    """A document type without a ``text`` field whose title is None (WaPo's JSON ``"title": null``):
    ir_datasets' ``default_text()`` is ``f"{None} {body}"`` = "None body". The title is '' and the text
    the body, as the BEIR folder of the same document (``"title": null``) reads it; formerly the text
    was "None body one", a word the document does not hold."""
    from ir_datasets.datasets.cord19 import Cord19Doc
    from ir_datasets.datasets.msmarco_document import MsMarcoDocument
    from ir_datasets.datasets.wapo import WapoDoc

    for cls, doc in [(WapoDoc, WapoDoc("d1", "u", None, "author", None, "", "body one", (), ())),
                     (MsMarcoDocument, MsMarcoDocument("d1", "u", None, "body one")),
                     (Cord19Doc, Cord19Doc("d1", None, "doi", "2020", "body one"))]:
        assert doc.default_text() == "None body one"  # ir_datasets' own
        name = f"harness-test/{uuid.uuid4().hex[:8]}"
        ir_datasets.registry.register(name, IrdsDataset(
            _TypedDocs(cls, [doc]), _Queries([GenericQuery("q1", "none")]), _Qrels([TrecQrel("q1", "d1", 1, "0")])))
        ds = load_dataset(f"irds:{name}")
        assert (ds.corpus.titles[0], ds.corpus.texts[0], ds.corpus.contents()) == ("", "body one", ["body one"]), cls
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": None, "text": "body one"}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "none"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    beir = load_dataset(str(folder))
    assert (beir.corpus.titles[0], beir.corpus.texts[0]) == ("", "body one")


def test_batches_end_before_arrow_string_columns_overflow(monkeypatch):
    """A batch ends at BATCH_DOCS documents or once its titles and texts reach BATCH_CHARS characters:
    an Arrow string column holds at most 2 GiB (int32 offsets), and ``pa.array`` of more gives a
    ChunkedArray that a record batch refuses. 50,000 documents of 43 KB (PMC or CORD-19 full texts)
    failed so ("ir_datasets could not provide it: TypeError: Cannot convert pyarrow.lib.ChunkedArray
    to pyarrow.lib.Array", checked in review with 2,100 documents of 1 MiB, 2.1 GiB in one batch; that
    load now passes, in 9 chunks). Here the limit is lowered to 10 characters: documents of 8
    characters end a batch every second document."""
    from harness.datasets import irds

    monkeypatch.setattr(irds, "BATCH_CHARS", 10, raising=False)
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    docs = [GenericDoc(f"d{i}", f"t{i:03d} x{i:02d}") for i in range(5)]  # 8 characters of text each
    ir_datasets.registry.register(name, IrdsDataset(
        _Docs(docs), _Queries([GenericQuery("q1", "t001")]), _Qrels([TrecQrel("q1", "d1", 1, "0")])))
    ds = load_dataset(f"irds:{name}")
    assert [len(c) for c in ds.corpus.table.column("text").chunks] == [2, 2, 1]
    assert ds.corpus.ids == [d.doc_id for d in docs] and list(ds.corpus.texts) == [d.text for d in docs]


def test_the_corpus_fingerprint_is_the_documents_sha256():
    """``corpus.fingerprint`` (the key of BM25 index and embedding caches) derives from the documents'
    sha256: the same for the same documents, another for a changed one (formerly None: each cache
    hashed every document again)."""
    name, (docs, queries, _) = _register()
    first = load_dataset(f"irds:{name}")
    assert first.corpus.fingerprint is not None
    queries.items[0] = GenericQuery("q1", "apples")  # not the corpus
    assert load_dataset(f"irds:{name}").corpus.fingerprint == first.corpus.fingerprint
    docs.items[0] = GenericDoc("d1", "apple bananas")
    assert load_dataset(f"irds:{name}").corpus.fingerprint != first.corpus.fingerprint
