"""irds:<id> review: field mapping, split selection, qrels rules and odd references, on datasets
registered locally with ir_datasets (no network), each compared with the same data loaded as a BEIR
folder and with what ir_datasets itself yields."""

from __future__ import annotations

import json
import random
import uuid
from typing import NamedTuple

import pytest

ir_datasets = pytest.importorskip("ir_datasets", reason="the irds extra (ir_datasets) is not installed")

from ir_datasets.datasets.base import Dataset as IrdsDataset  # noqa: E402
from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc  # noqa: E402
from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, GenericDoc, GenericQuery, TrecQrel  # noqa: E402
from ir_datasets.formats.trec import TrecParsedDoc, TrecQuery  # noqa: E402
from ir_datasets.util import LocalDownload  # noqa: E402

from harness.datasets import load_dataset  # noqa: E402
from harness.errors import HarnessError  # noqa: E402


@pytest.fixture(autouse=True)
def irds_home(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))


class _Docs(BaseDocs):
    def __init__(self, cls, items):
        self._cls, self._items = cls, items

    def docs_iter(self):
        return iter(self._items)

    def docs_cls(self):
        return self._cls


class _Queries(BaseQueries):
    def __init__(self, cls, items):
        self._cls, self._items = cls, items

    def queries_iter(self):
        return iter(self._items)

    def queries_cls(self):
        return self._cls


class _Qrels(BaseQrels):
    def __init__(self, items):
        self._items = items

    def qrels_iter(self):
        return iter(self._items)

    def qrels_cls(self):
        return TrecQrel

    def qrels_defs(self):
        return {}


class TitleBodyDoc(NamedTuple):  # ir_datasets' MsMarcoDocument / WapoDoc shape
    doc_id: str
    url: str
    title: str
    body: str

    def default_text(self):
        return f"{self.title} {self.body}"


class TitleLinesDoc(NamedTuple):  # ir_datasets' CslDoc shape: title, newline, abstract
    doc_id: str
    title: str
    abstract: str

    def default_text(self):
        return f"{self.title}\n{self.abstract}"


class TitleOnlyDoc(NamedTuple):  # ir_datasets' TripClickPartialDoc shape
    doc_id: str
    title: str
    url: str

    def default_text(self):
        return self.title


def _register(*parts, name: str | None = None) -> str:
    name = name or f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(*parts))
    return name


def _beir_folder(folder, docs, queries, qrels_lines):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(qrels_lines), encoding="utf-8")
    return folder


def _simple(docs, cls, qrels=None, name=None):
    queries = [GenericQuery("q1", "alpha")]
    return _register(_Docs(cls, docs), _Queries(GenericQuery, queries),
                     _Qrels(qrels or [TrecQrel("q1", docs[0].doc_id, 1, "0")]), name=name)


def test_title_and_body_are_split_as_beir_splits_them(tmp_path):
    """A type with a title and no ``text`` field (MsMarcoDocument, Cord19Doc, NfCorpusDoc, ...): title
    is ``title``, text the rest of ``default_text()`` (BEIR's nfcorpus / trec-covid: title, abstract), so
    title + " " + text is default_text() and equals the BEIR folder of the same documents. The former
    loader gave text = default_text(), the title read twice ("Alpha Alpha body one")."""
    docs = [TitleBodyDoc("d1", "u", "Alpha", "body one"), TitleBodyDoc("d2", "u", "", "body two"),
            TitleBodyDoc("d3", "u", "Gamma", ""), TitleBodyDoc("d4", "u", "T", "  two spaces")]
    ds = load_dataset(f"irds:{_simple(docs, TitleBodyDoc)}")
    assert list(ds.corpus.titles) == ["Alpha", "", "Gamma", "T"]
    assert list(ds.corpus.texts) == [d.body for d in docs]  # the body exactly, its own spaces kept
    assert ds.corpus.contents() == ["Alpha body one", "body two", "Gamma", "T   two spaces"]
    folder = _beir_folder(tmp_path / "f", [{"_id": d.doc_id, "title": d.title, "text": d.body} for d in docs],
                          [{"_id": "q1", "text": "alpha"}], ["q1\td1\t1\n"])
    beir = load_dataset(str(folder))
    assert (list(ds.corpus.titles), list(ds.corpus.texts)) == (list(beir.corpus.titles), list(beir.corpus.texts))
    assert ds.corpus.contents() == beir.corpus.contents()

    lines = load_dataset(f"irds:{_simple([TitleLinesDoc('d1', 'Title', 'Abstract')], TitleLinesDoc)}")
    assert (lines.corpus.titles[0], lines.corpus.texts[0]) == ("Title", "Abstract")
    only = load_dataset(f"irds:{_simple([TitleOnlyDoc('d1', 'Just a title', 'u')], TitleOnlyDoc)}")
    assert (only.corpus.titles[0], only.corpus.texts[0]) == ("Just a title", "")
    robust = load_dataset(f"irds:{_simple([TrecParsedDoc('d1', 'Head', 'the body', '<x/>')], TrecParsedDoc)}")
    assert robust.corpus.contents() == ["Head the body"]  # ir_datasets' default_text()
    generic = load_dataset(f"irds:{_simple([GenericDoc('d1', 'plain text')], GenericDoc)}")
    assert (generic.corpus.titles[0], generic.corpus.texts[0]) == ("", "plain text")


def test_split_named_by_the_id_is_the_split():
    """``msmarco-passage/dev/small`` is the dev split: recorded as such (the former loader recorded the
    --split default, 'test', for dev data); another explicit split is an error, not a silent relabel."""
    docs = [GenericDoc("d1", "alpha")]
    name = _simple(docs, GenericDoc, name=f"harness-test/{uuid.uuid4().hex[:8]}/dev/small")
    ds = load_dataset(f"irds:{name}")
    assert ds.split == "dev"
    assert ds.warnings == [f"the split is 'dev', named by the id {name!r} (not 'test')"]
    assert load_dataset(f"irds:{name}", split="dev").warnings == []
    with pytest.raises(HarnessError, match=f"^irds:{name}: the id names split 'dev', not 'train'"):
        load_dataset(f"irds:{name}", split="train")


def test_split_selects_the_sub_id():
    """``beir/scifact`` has no qrels, ``beir/scifact/train`` and ``/test`` have: --split picks one."""
    base = f"harness-test/{uuid.uuid4().hex[:8]}"
    docs = _Docs(GenericDoc, [GenericDoc("d1", "alpha"), GenericDoc("d2", "beta")])
    queries = _Queries(GenericQuery, [GenericQuery("q1", "alpha"), GenericQuery("q2", "beta")])
    _register(docs, queries, name=base)
    _register(docs, queries, _Qrels([TrecQrel("q1", "d1", 1, "0")]), name=f"{base}/train")
    _register(docs, queries, _Qrels([TrecQrel("q2", "d2", 2, "0")]), name=f"{base}/test")
    test = load_dataset(f"irds:{base}")
    assert (test.split, test.qrels.to_dict(), test.queries.as_dict()) == ("test", {"q2": {"d2": 2}}, {"q2": "beta"})
    train = load_dataset(f"irds:{base}", split="train")
    assert (train.split, train.qrels.to_dict(), train.name) == ("train", {"q1": {"d1": 1}}, base)
    assert train.files[f"irds:{base}/train"] == f"ir_datasets {ir_datasets.__version__}"
    with pytest.raises(HarnessError, match="has no qrels; ir_datasets has split.s. train, test of it"):
        load_dataset(f"irds:{base}", split="dev")


@pytest.mark.parametrize("text, message", [
    ("irds:", "'irds:' names no ir_datasets id"),
    ("irds:  ", "'irds:  ' names no ir_datasets id"),
    ("hf:", "'hf:' names no Hugging Face hub repo"),
    ("", "no dataset named"),
])
def test_empty_references_are_one_clear_line(text, message):
    # formerly: "ir_datasets knows no dataset ''", "IndexError: list index out of range", and "" was the
    # working folder ("./: no corpus.jsonl")
    with pytest.raises(HarnessError, match=f"^{message}"):
        load_dataset(text)


def test_qrels_rules_match_the_folder_loader(tmp_path):
    """Grades 0 and negative kept, the iteration column ignored (as trec_eval does), a pair judged twice
    with one grade kept once, a judged query without text and a judgment of a missing document counted
    as warnings, unjudged queries dropped: the same as the BEIR folder of the same rows."""
    docs = [GenericDoc("d1", "a"), GenericDoc("d2", "b"), GenericDoc("d3", "c")]
    queries = [GenericQuery("q1", "a"), GenericQuery("q2", "b"), GenericQuery("q3", "unjudged")]
    rows = [("q1", "d1", 2, "0"), ("q1", "d2", 0, "1"), ("q1", "d2", 0, "5"), ("q2", "d3", -1, "Q0"),
            ("q2", "nodoc", 1, "0"), ("qx", "d1", 1, "0")]
    name = _register(_Docs(GenericDoc, docs), _Queries(GenericQuery, queries), _Qrels([TrecQrel(*r) for r in rows]))
    ds = load_dataset(f"irds:{name}")
    folder = _beir_folder(tmp_path / "f", [{"_id": d.doc_id, "title": "", "text": d.text} for d in docs],
                          [{"_id": q.query_id, "text": q.text} for q in queries],
                          [f"{q}\t{d}\t{g}\n" for q, d, g, _ in rows])
    beir = load_dataset(str(folder))
    expected = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": -1, "nodoc": 1}, "qx": {"d1": 1}}
    assert ds.qrels.to_dict() == beir.qrels.to_dict() == expected
    assert ds.queries.as_dict() == beir.queries.as_dict() == {"q1": "a", "q2": "b"}
    assert ds.warnings == beir.warnings == ["1 judged query id(s) have no query text; they score 0",
                                            "1 judgment(s) name documents missing from the corpus"]
    conflict = _register(_Docs(GenericDoc, docs), _Queries(GenericQuery, queries),
                         _Qrels([TrecQrel("q1", "d1", 1, "0"), TrecQrel("q1", "d1", 2, "1")]))
    with pytest.raises(HarnessError, match="conflicting grade for document 'd1'"):
        load_dataset(f"irds:{conflict}")


def test_randomized_beir_components_equal_docs_iter_and_folder(tmp_path):
    """2,000 random documents (unicode, NUL, quotes, empty and null fields, a long one) through
    ir_datasets' BEIR components: ids, titles, texts and order as docs_iter yields them and as the
    folder loader reads the same files. (A 50,000-document run of the same check passed in review.)"""
    rng = random.Random(7)
    alphabet = "abc xyz 019 é漢字🙂\u0000\t\u00a0\u2028\"\\/"

    def text(n):
        return "".join(rng.choice(alphabet) for _ in range(n))

    ids, docs = set(), []
    while len(docs) < 2000:
        doc_id = str(rng.randrange(10**5)) if rng.random() < .4 else \
            "".join(c for c in text(rng.randint(1, 6)) if not c.isspace() and c != "\u0000") or "e"
        if doc_id in ids:
            continue
        ids.add(doc_id)
        docs.append({"_id": doc_id, "title": rng.choice([None, "", text(rng.randint(0, 12))]),
                     "text": rng.choice([None, "", text(rng.randint(0, 80))])})
    docs[5]["text"] = text(200_000)
    folder = _beir_folder(tmp_path / "r", docs, [{"_id": "q1", "text": "abc"}], [f"q1\t{docs[0]['_id']}\t1\n"])
    name = f"harness-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, IrdsDataset(
        BeirDocs(name, LocalDownload(folder / "corpus.jsonl", mkdir=False), BeirTitleDoc),
        BeirQueries(name, LocalDownload(folder / "queries.jsonl", mkdir=False), GenericQuery),
        BeirQrels(LocalDownload(folder / "qrels" / "test.tsv", mkdir=False), {})))
    ds = load_dataset(f"irds:{name}")
    raw = list(ir_datasets.load(name).docs_iter())
    beir = load_dataset(str(folder))
    assert ds.corpus.ids == [d.doc_id for d in raw] == beir.corpus.ids
    assert list(ds.corpus.titles) == [d.title or "" for d in raw] == list(beir.corpus.titles)
    assert list(ds.corpus.texts) == [d.text or "" for d in raw] == list(beir.corpus.texts)


def test_trec_style_queries_use_default_text():
    """Queries without a ``text`` field (TrecQuery: title, description, narrative) use ir_datasets'
    default_text(), the title; beir/trec-covid's BeirCovidQuery has a ``text`` field (BEIR's question)."""
    name = _register(_Docs(GenericDoc, [GenericDoc("d1", "x")]),
                     _Queries(TrecQuery, [TrecQuery("1", "coronavirus origin", "what is the origin of COVID-19",
                                                    "seeking range of information")]),
                     _Qrels([TrecQrel("1", "d1", 1, "0")]))
    assert load_dataset(f"irds:{name}").queries.as_dict() == {"1": "coronavirus origin"}


def test_run_prints_the_split_the_dataset_is(tmp_path, harness_cli, monkeypatch):
    """``harness run -d irds:.../dev/small`` loads dev data: the printed title says (dev), as metrics.json
    does, not the --split default (formerly '(test)')."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    name = _simple([GenericDoc("d1", "alpha"), GenericDoc("d2", "beta")], GenericDoc,
                   name=f"harness-test/{uuid.uuid4().hex[:8]}/dev/small")
    out = harness_cli("run", "-d", f"irds:{name}", "-r", "bm25", "-o", tmp_path / "out")
    assert out.returncode == 0, out.stderr
    assert "(dev) - bm25: 1 queries" in out.stdout and "(test)" not in out.stdout
