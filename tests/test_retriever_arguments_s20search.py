"""Every retriever's ``search(queries, k)`` and every reranker's ``rerank(run, queries, corpus, depth)``,
called directly from Python, checks its arguments in one place (harness.retriever.check_search,
harness.reranker.check_rerank), with the rule the CLI and run_experiment apply
(harness.experiment.check_cutoffs_and_depth) and the wording the reranker's depth check had
(Candidates.of): an integer in [1, 2^63 - 1], numpy's integers accepted, a bool, a float, a str or None
refused.

Seen before (s20search survey, HEAD 65a6d75; 2 queries, 5 documents): bm25 took ``k=2.5`` and ``k=True``
silently (True: one hit per query), rank-bm25 ``k=0`` (an empty run); ``k="10"`` was numpy's TypeError
"'<' not supported between instances of 'str' and 'int'"; ``np.int64(2)`` was refused by run-file,
sqlite, postgres, impacts, sparse and http ("k must be an integer >= 1, got np.int64(2)") and taken by
bm25 and dense; ``k=2**63`` was an OverflowError from C (bm25, impacts, sparse, run-file, http) or taken
(dense, sqlite); a list or a dict of queries an AttributeError inside each; search() before index() a
RuntimeError naming no retriever; a plugin got whatever it was given. A reranker's run, queries or corpus
of the wrong type was an AttributeError inside Candidates.of; a plugin overriding rerank() went unchecked.

Expected (the rule above; messages as the existing checks wrote them): one ValueError
``k must be an integer >= 1 and at most 2^63 - 1 (ranks are int64), got <value>`` for every retriever,
one TypeError naming ``queries``, one RuntimeError naming the retriever, ``np.int64(2)`` the same run as
``2`` (and passed on to the implementation as a Python int).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.reranker import Candidates, Reranker
from harness.retriever import Retriever
from harness.run import Run

REPO = Path(__file__).resolve().parents[1]
CORPUS = Corpus(["d1", "d2", "d3", "d4", "d5"], ["Apples", "", "Bananas", "", "Cherries"],
                ["red apples grow on trees", "bananas are yellow", "yellow fruit from the tropics",
                 "nothing relevant here", "cherries are red"])
QUERIES = Queries(["q1", "q2"], ["red apples", "yellow cherries"])
FIRST = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 2.0, "d3": 1.0}})
WORDS = ["red", "apples", "grow", "on", "trees", "bananas", "are", "yellow", "fruit", "from", "the", "tropics",
         "nothing", "relevant", "here", "cherries"]

BAD_COUNTS = [0, -1, 2.5, "10", True, False, None, 2**63, np.float64(2.0)]
BAD_QUERIES = [["red apples"], {"q1": "red apples"}, ("q1", "red apples")]


def count_message(name: str, value) -> str:
    return f"{name} must be an integer >= 1 and at most 2^63 - 1 (ranks are int64), got {value!r}"


# ----------------------------------------------------------------------------- plugin-style implementations
class PlainPlugin(Retriever):
    """Written against the documented interface (docs/bench.md) with no argument checks of its own: scores
    each document by the query words it holds; records the k it was given."""

    name = "plain-plugin"

    def __init__(self):
        self.given = []

    def index(self, corpus: Corpus) -> None:
        self._corpus = corpus

    def search(self, queries: Queries, k: int) -> Run:
        self.given.append(k)
        out = {}
        for qid, text in zip(queries.ids, queries.texts):
            words = set(text.split())
            scores = {d: float(len(words & set(c.lower().split())))
                      for d, c in zip(self._corpus.ids, self._corpus.contents())}
            top = sorted(scores.items(), key=lambda t: (-t[1], t[0]))[:k]  # (2.5: a TypeError; True: 1 hit)
            out[qid] = dict(top)
        return Run.from_dict(out)


class PluginSubclass(PlainPlugin):
    """A plugin subclassing another (its search() calls the parent's)."""

    name = "plugin-subclass"

    def search(self, queries: Queries, k: int) -> Run:
        return super().search(queries, k)


class ScorePlugin(Reranker):
    """A reranker plugin as documented: score() only."""

    name = "score-plugin"

    def score(self, candidates: Candidates, queries: Queries, corpus: Corpus) -> np.ndarray:
        return -candidates.doc_rows.astype(np.float64)


class OverridingPlugin(Reranker):
    """A reranker plugin that overrides rerank() itself (its own cut; no Candidates.of)."""

    name = "overriding-plugin"

    def __init__(self):
        self.given = []

    def rerank(self, run, queries, corpus, depth, source=None, ignore_identical_ids=True, semantics=None):
        self.given.append(depth)
        return Run.from_dict({q: dict(list(d.items())[:depth]) for q, d in run.to_dict().items()})

    def score(self, candidates, queries, corpus):  # (unused)
        raise AssertionError


# ----------------------------------------------------------------------------- the built-ins
@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("s20search")


@pytest.fixture(scope="module")
def engine():
    from tests.retrievers.http_fakes import FakeEngine, harness_hits

    with FakeEngine(lambda request, n: (200, harness_hits(request))) as fake:
        yield fake


def fake_model_dir(root: Path) -> Path:
    folder = root / "fake-model"
    if not folder.exists():
        folder.mkdir()
        (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {}}))
        (folder / "model.safetensors").write_bytes(b"fake weights")
    return folder


def make_retriever(name: str, root: Path, request) -> Retriever:
    if name == "bm25":
        from retrievers.bm25 import BM25Retriever

        return BM25Retriever(cache=False, n_threads=1)
    if name == "bm25-rank-bm25":
        pytest.importorskip("rank_bm25")
        from retrievers.bm25 import BM25Retriever

        return BM25Retriever(backend="rank-bm25")
    if name in ("dense", "dense-faiss"):
        from retrievers.dense import DenseRetriever
        from tests.retrievers.test_dense_retriever import FakeModel

        extra = {}
        if name == "dense-faiss":
            pytest.importorskip("faiss")
            extra = {"index": "faiss"}
        return DenseRetriever(model=FakeModel(fake_model_dir(root)), cache=False, progress=False, **extra)
    if name == "run-file":
        from retrievers.run_file import RunFileRetriever

        (root / "run.trec").write_text("q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d3 3 1 t\nq2 Q0 d5 1 2 t\n")
        return RunFileRetriever(str(root / "run.trec"))
    if name == "sqlite":
        from retrievers.engines.sqlite import SQLiteRetriever

        return SQLiteRetriever(cache=False, n_threads=1)
    if name == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        from retrievers.engines.postgres import PostgresRetriever

        return PostgresRetriever(dsn=dsn)
    if name == "impacts":
        from retrievers.sparse.impacts import ImpactsRetriever
        from tests.retrievers.sparse_data import random_vectors, write_jsonl

        rng = np.random.default_rng(20)
        docs = write_jsonl(root / "docs.jsonl", random_vectors(CORPUS.ids, rng, vocab=20, lo=2, hi=5))
        queries = write_jsonl(root / "queries.jsonl", random_vectors(list(QUERIES.ids), rng, vocab=20, lo=1, hi=3))
        return ImpactsRetriever(documents=str(docs), queries=str(queries), n_threads=1)
    if name == "sparse":
        pytest.importorskip("sentence_transformers")
        from retrievers.sparse.retriever import SparseRetriever
        from tests.retrievers.tiny_models import sparse_encoder

        folder = root / "sparse" / "encoder"
        if not folder.exists():
            sparse_encoder(root / "sparse", WORDS)
        return SparseRetriever(model=str(folder), device="cpu", cache=False, n_threads=1)
    if name == "http":
        return HTTPRetrieverFor(request.getfixturevalue("engine"))
    if name == "plugin":
        return PlainPlugin()
    if name == "plugin-subclass":
        return PluginSubclass()
    if name == "example-plugin":  # examples/plugin's idf-overlap, unchanged
        sys.path.insert(0, str(REPO / "examples" / "plugin"))
        try:
            from harness_example_plugin import IdfOverlapRetriever
        finally:
            sys.path.remove(str(REPO / "examples" / "plugin"))
        return IdfOverlapRetriever()
    raise AssertionError(name)


def HTTPRetrieverFor(engine):
    from retrievers.http import HTTPRetriever

    return HTTPRetriever(url=engine.url, preset="harness", retries=0)


@pytest.fixture(scope="module")
def pg_dsn():
    from tests.retrievers import pg_cluster

    yield from pg_cluster.start_cluster()


NEED_INDEX = ["bm25", "bm25-rank-bm25", "dense", "dense-faiss", "sqlite", "postgres", "impacts", "sparse", "plugin",
              "plugin-subclass", "example-plugin"]
NO_INDEX = ["run-file", "http"]  # (index_required = False: the run file, the service hold the index)


def available(names, make) -> dict:
    """{name: make(name)} for those whose optional package or server is here (the others skip themselves)."""
    out = {}
    for name in names:
        try:
            out[name] = make(name)
        except pytest.skip.Exception:
            pass
    return out


@pytest.fixture(scope="module")
def retrievers(request, workdir) -> dict[str, Retriever]:
    """Every built-in retriever and the plugin-style ones, indexed on CORPUS (run-file and http too)."""
    def indexed(name):
        retriever = make_retriever(name, workdir, request)
        retriever.index(CORPUS)
        return retriever

    return available(NEED_INDEX + NO_INDEX, indexed)


def outcome(call) -> str:
    try:
        call()
    except Exception as exc:  # (what a user sees: the exception's type and message)
        return f"{type(exc).__name__}: {exc}"
    return "no error"


@pytest.mark.parametrize("k", BAD_COUNTS, ids=repr)
def test_a_bad_k_is_the_same_value_error_for_every_retriever(retrievers, k):
    got = {name: outcome(lambda: r.search(QUERIES, k)) for name, r in retrievers.items()}
    assert got == {name: f"ValueError: {count_message('k', k)}" for name in retrievers}
    assert {"bm25", "dense", "sqlite", "impacts", "run-file", "http", "plugin"} <= set(got)


@pytest.mark.parametrize("queries", BAD_QUERIES, ids=lambda q: type(q).__name__)
def test_queries_that_are_no_queries_are_the_same_type_error_for_every_retriever(retrievers, queries):
    got = {name: outcome(lambda: r.search(queries, 2)) for name, r in retrievers.items()}
    hint = ": Queries(list(d), list(d.values())) makes one of a {id: text} dict" if isinstance(queries, dict) else ""
    assert got == {name: f"TypeError: queries must be a harness Queries (Queries(ids, texts)), "
                         f"got {type(queries).__name__}{hint}" for name in retrievers}


def test_numpy_integer_k_is_the_same_run_as_int_k_and_empty_queries_an_empty_run(retrievers):
    for name, retriever in retrievers.items():
        expected = retriever.search(QUERIES, 2)
        assert expected.n_queries == 2 and len(expected.doc_codes) > 0, name
        for k in (np.int64(2), np.int32(2), np.uint8(2)):
            assert outcome(lambda: retriever.search(QUERIES, k)) == "no error", (name, k)
            assert retriever.search(QUERIES, k).to_dict() == expected.to_dict(), (name, k)
        empty = retriever.search(Queries([], []), 3)  # (every one took it before: kept)
        assert empty.n_queries == 0 and len(empty.doc_codes) == 0, name
    assert all(type(k) is int for k in retrievers["plugin"].given)  # the implementation is handed a Python int


def test_search_before_index_is_one_error_naming_the_retriever(request, workdir):
    fresh = available(NEED_INDEX, lambda name: make_retriever(name, workdir, request))
    got = {name: outcome(lambda: r.search(QUERIES, 2)) for name, r in fresh.items()}
    assert got == {name: f"RuntimeError: retriever {r.name!r} ({type(r).__name__}): index(corpus) must be called "
                         "before search(queries, k)" for name, r in fresh.items()}
    # the run file and the service hold their index: they search without index(), as before
    for name, retriever in available(NO_INDEX, lambda name: make_retriever(name, workdir, request)).items():
        assert retriever.index_required is False and retriever.search(QUERIES, 2).n_queries == 2, name


@pytest.mark.parametrize("corpus", [["a text", "another"], {"d1": "a text"}, None], ids=lambda c: type(c).__name__)
def test_a_corpus_that_is_no_corpus_is_the_same_type_error_for_every_retriever(request, workdir, corpus):
    # before: an AttributeError from inside each retriever's index() ('list' object has no attribute 'ids'), or,
    # for the run file and http (which need no index), nothing at all
    fresh = available(NEED_INDEX + NO_INDEX, lambda name: make_retriever(name, workdir, request))
    got = {name: outcome(lambda: r.index(corpus)) for name, r in fresh.items()}
    assert got == {name: "TypeError: corpus must be a harness Corpus (Corpus(ids, titles, texts)), "
                         f"got {type(corpus).__name__}" for name in fresh}
    assert {"bm25", "dense", "sqlite", "impacts", "run-file", "http", "plugin"} <= set(got)
    assert outcome(lambda: fresh["bm25"].index(corpus=corpus)) == got["bm25"]  # (given by keyword too)


def test_a_failed_index_leaves_nothing_to_search():
    """An index() that raises (interrupted, a bad corpus) is no index: search() is refused, not run on what
    the earlier index left half replaced."""
    class Failing(PlainPlugin):
        def index(self, corpus):
            super().index(corpus)
            if len(corpus) == 0:
                raise ValueError("empty corpus")

    retriever = Failing()
    retriever.index(CORPUS)
    assert retriever.search(QUERIES, 1).n_queries == 2
    with pytest.raises(ValueError, match="empty corpus"):
        retriever.index(Corpus([], [], []))
    with pytest.raises(RuntimeError, match="index\\(corpus\\) must be called before search"):
        retriever.search(QUERIES, 1)


def test_a_plugin_default_k_and_keyword_arguments_still_work():
    class DefaultK(PlainPlugin):
        def search(self, queries, k=1):
            return super().search(queries, k)

    retriever = DefaultK()
    retriever.index(CORPUS)
    assert [len(retriever.search(QUERIES).doc_ids(i)) for i in range(2)] == [1, 1]
    assert [len(retriever.search(queries=QUERIES, k=np.int64(2)).doc_ids(i)) for i in range(2)] == [2, 2]
    with pytest.raises(ValueError, match=r"got 2\.5$"):
        retriever.search(QUERIES, k=2.5)


# ----------------------------------------------------------------------------- rerankers
@pytest.fixture(scope="module")
def cross_encoder_folder(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("tiny-ce")
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    transformers.BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=5 + len(WORDS), hidden_size=8, num_hidden_layers=1,
                                     num_attention_heads=1, intermediate_size=16, max_position_embeddings=64,
                                     num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    return folder


RERANKERS = ["bi-encoder", "cross-encoder", "score-plugin", "overriding-plugin"]


@pytest.fixture(scope="module")
def rerankers(request, workdir) -> dict[str, Reranker]:
    def make(name):
        if name == "bi-encoder":
            from retrievers.rerank.bi_encoder import BiEncoderReranker
            from tests.retrievers.test_dense_retriever import FakeModel

            return BiEncoderReranker(model=FakeModel(fake_model_dir(workdir)), cache=False, progress=False)
        if name == "cross-encoder":
            from retrievers.rerank.cross_encoder import CrossEncoderReranker

            return CrossEncoderReranker(str(request.getfixturevalue("cross_encoder_folder")), device="cpu")
        return ScorePlugin() if name == "score-plugin" else OverridingPlugin()

    return available(RERANKERS, make)


@pytest.mark.parametrize("depth", BAD_COUNTS, ids=repr)
def test_a_bad_depth_is_the_same_value_error_for_every_reranker(rerankers, depth):
    got = {name: outcome(lambda: r.rerank(FIRST, QUERIES, CORPUS, depth)) for name, r in rerankers.items()}
    assert got == {name: f"ValueError: {count_message('depth', depth)}" for name in rerankers}
    assert {"bi-encoder", "score-plugin", "overriding-plugin"} <= set(got)


@pytest.mark.parametrize("argument", ["run", "queries", "corpus"])
def test_a_run_queries_or_corpus_of_the_wrong_type_is_one_type_error(rerankers, argument):
    given = {"run": FIRST, "queries": QUERIES, "corpus": CORPUS}
    given[argument] = {"run": FIRST.to_dict(), "queries": QUERIES.as_dict(), "corpus": list(CORPUS.ids)}[argument]
    got = {name: outcome(lambda: r.rerank(given["run"], given["queries"], given["corpus"], 2))
           for name, r in rerankers.items()}
    wrong = type(given[argument]).__name__
    expected = {"run": "run must be a harness Run (Run.from_dict({query id: {doc id: score}}) makes one), "
                       f"got {wrong}",
                "queries": f"queries must be a harness Queries (Queries(ids, texts)), got {wrong}: Queries(list(d), "
                           "list(d.values())) makes one of a {id: text} dict",
                "corpus": f"corpus must be a harness Corpus (Corpus(ids, titles, texts)), got {wrong}"}[argument]
    assert got == {name: f"TypeError: {expected}" for name in rerankers}


def test_numpy_integer_depth_is_the_same_run_as_int_depth(rerankers):
    for name, reranker in rerankers.items():
        expected = reranker.rerank(FIRST, QUERIES, CORPUS, 2).to_dict()
        assert all(len(docs) == 2 for docs in expected.values()), name
        assert reranker.rerank(FIRST, QUERIES, CORPUS, np.int64(2)).to_dict() == expected, name
    assert all(type(d) is int for d in rerankers["overriding-plugin"].given)  # handed a Python int


def test_the_checks_wrap_each_method_once_and_keep_its_signature():
    import inspect

    assert PlainPlugin.search.__harness_checked__ and not hasattr(PlainPlugin.search.__wrapped__, "__wrapped__")
    assert PluginSubclass.search.__wrapped__ is not PlainPlugin.search.__wrapped__  # (each class's own)
    assert list(inspect.signature(PlainPlugin.search).parameters) == ["self", "queries", "k"]
    assert list(inspect.signature(OverridingPlugin.rerank).parameters) == [
        "self", "run", "queries", "corpus", "depth", "source", "ignore_identical_ids", "semantics"]
    assert OverridingPlugin.rerank.__harness_checked__ and not hasattr(OverridingPlugin.rerank.__wrapped__,
                                                                           "__wrapped__")
