"""``fields="multifield"``: title and text as two BM25 fields, Anserini's BEIR "multifield" runs.

Sources of the expected values:
* a worked example, scored here by Lucene's BM25 formula in float32 (BM25Similarity: idf
  ``log(1 + (docCount - df + 0.5) / (df + 0.5))``, ``w - w / (1 + tf / (k1 (1 - b + b dl / avgdl)))``), each
  field with its own docCount, df and average length, the two fields' scores summed (Anserini's
  ``BagOfWordsQueryGenerator`` for ``-fields contents=1.0 title=1.0``: one SHOULD clause per field);
* Anserini's published BEIR (v1.0.0) multifield BM25 regressions (../shared/datasets/REFERENCE_SCORES.md, table B):
  SciFact nDCG@10 0.6647, R@100 0.9076, R@1000 0.9800; NFCorpus 0.3254, 0.2500, 0.3718.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.datasets import load_dataset
from harness.datasets.corpus import Corpus, Queries
from harness.evaluation import evaluate
from retrievers.bm25 import BM25Retriever
from retrievers.bm25 import loader

K1, B = np.float32(0.9), np.float32(0.4)


def lucene_bm25(tf: int, dl: int, df: int, doc_count: int, total_length: int) -> np.float32:
    """Lucene's BM25 of one posting, in its float32 arithmetic (exact lengths: lossy_lengths=False)."""
    w = np.float32(math.log(1 + (doc_count - df + 0.5) / (df + 0.5)))
    avgdl = np.float32(total_length / doc_count)
    inv = np.float32(1) / (K1 * ((np.float32(1) - B) + B * np.float32(dl) / avgdl))
    return w - w / (np.float32(1) + np.float32(tf) * inv)


def toy() -> tuple[Corpus, Queries]:
    # analysed: apple -> appl, pie, banana, bread, recipe -> recip, cake, cherry -> cherri, tart
    ids = ["d1", "d2", "d3", "d4", "d5"]
    titles = ["Apple pie", "Banana", "Cherry apple", "", "Apple"]
    texts = ["Banana bread recipe", "apple apple cake", " \t\n ", "apple banana", "apple tart"]
    return Corpus(ids, titles, texts), Queries(["q1"], ["apple"])


def test_each_field_scores_with_its_own_statistics_and_the_fields_are_summed():
    """Title field: d1 (2 terms), d2 (1), d5 (1) -- docCount 3, 4 terms, "appl" in d1 and d5; d4 has no
    title term and d3 is not indexed (blank text). Text field: d1 (3), d2 (3), d4 (2), d5 (2) -- docCount 4,
    10 terms, "appl" in d2 (twice), d4 and d5."""
    corpus, queries = toy()
    retriever = BM25Retriever(fields="multifield", lossy_lengths=False, cache=False)
    retriever.index(corpus)
    got = retriever.search(queries, 10).to_dict()["q1"]
    title = lambda tf, dl: lucene_bm25(tf, dl, df=2, doc_count=3, total_length=4)  # noqa: E731
    text = lambda tf, dl: lucene_bm25(tf, dl, df=3, doc_count=4, total_length=10)  # noqa: E731
    expected = {"d1": title(1, 2), "d2": text(2, 3), "d4": text(1, 2),
                "d5": np.float32(np.float64(title(1, 1)) + np.float64(text(1, 2)))}
    assert set(got) == set(expected)  # (d3's title holds "apple", but Anserini does not index it)
    for doc, score in expected.items():
        assert np.float32(got[doc]) == score, doc
    assert max(got, key=got.get) == "d5"


def test_a_blank_text_leaves_the_document_out_of_both_fields():
    """Counted, d3 would make the title field's docCount 4 and "appl"'s df 3: d1's score would differ."""
    corpus, queries = toy()
    retriever = BM25Retriever(fields="multifield", lossy_lengths=False, cache=False)
    retriever.index(corpus)
    d1 = np.float32(retriever.search(queries, 10).to_dict()["q1"]["d1"])
    assert d1 == lucene_bm25(1, 2, df=2, doc_count=3, total_length=4)
    assert d1 != lucene_bm25(1, 2, df=3, doc_count=4, total_length=6)


def test_without_titles_multifield_is_flat():
    """No title: the title field has no term, the text field is the flat field (title + " " + text is the
    text), so both runs are the same, scores and order (and the joined index is the text field's own)."""
    dataset = load_dataset("scifact")
    corpus = Corpus(dataset.corpus.ids, [""] * len(dataset.corpus), list(dataset.corpus.texts))
    runs = []
    for fields in ("flat", "multifield"):
        retriever = BM25Retriever(fields=fields, cache=False)
        retriever.index(corpus)
        runs.append(retriever.search(dataset.queries, 100).to_dict())
    assert runs[0] == runs[1] and sum(map(len, runs[0].values())) == 29_965  # (some queries match < 100)


def test_scifact_reproduces_anserinis_multifield_bm25():
    dataset = load_dataset("scifact")
    retriever = BM25Retriever(fields="multifield", cache=False)
    retriever.index(dataset.corpus)
    means = evaluate(retriever.search(dataset.queries, 1000), dataset.qrels,
                     ["NDCG@10", "Recall@100", "Recall@1000"]).means
    assert (round(means["NDCG@10"], 4), round(means["Recall@100"], 4), round(means["Recall@1000"], 4)) == \
        (0.6647, 0.9076, 0.9800)


def test_nfcorpus_reproduces_anserinis_multifield_bm25_under_its_tie_order(nfcorpus_dir):
    """As the flat run (tests/test_nfcorpus_journey.py): Anserini orders exactly tied scores by doc id
    ascending, trec_eval (and this project) descending; the same scores ranked Anserini's way and cut at
    1,000 give its published numbers under pytrec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")
    dataset = load_dataset(str(nfcorpus_dir))
    retriever = BM25Retriever(fields="multifield", cache=False)
    retriever.index(dataset.corpus)
    deep = retriever.search(dataset.queries, 1100).to_dict()
    for docs in deep.values():  # no tie straddles rank 1000 unseen
        scores = sorted(docs.values(), reverse=True)
        assert len(scores) < 1100 or scores[999] > scores[-1]
    qrels = dataset.qrels.to_dict()

    def means(descending_ids: bool) -> tuple[float, ...]:
        cut = {}
        for qid, docs in deep.items():
            ranked = sorted(docs, key=lambda d: (-docs[d], d))
            if descending_ids:
                ranked = [d for _, d in sorted(((docs[d], d) for d in docs), reverse=True)]
            cut[qid] = {d: float(1000 - i) for i, d in enumerate(ranked[:1000])}
        values = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100,1000"}).evaluate(cut)
        return tuple(round(math.fsum(values.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels), 4)
                     for m in ("ndcg_cut_10", "recall_100", "recall_1000"))

    assert means(descending_ids=False) == (0.3254, 0.2500, 0.3718)  # Anserini, published
    assert means(descending_ids=True) == (0.3247, 0.2502, 0.3717)  # this project (trec_eval's order)


@pytest.mark.skipif(loader.extension() is None, reason="needs the compiled BM25 extension (built at install)")
@pytest.mark.parametrize("stemmer", ["porter", "english"])  # (english: the compiled engine with Python term ids)
def test_the_compiled_and_python_engines_give_the_same_run(monkeypatch, stemmer):
    dataset = load_dataset("scifact")
    runs = []
    for compiled in ("1", "0"):
        monkeypatch.setenv("HARNESS_BM25_COMPILED", compiled)
        retriever = BM25Retriever(fields="multifield", stemmer=stemmer, cache=False)
        assert retriever.backend.engine.compiled == (compiled == "1")
        retriever.index(dataset.corpus)
        runs.append(retriever.search(dataset.queries, 100).to_dict())
    assert runs[0] == runs[1]


def test_the_joined_index_is_cached_and_a_second_index_is_a_hit(tmp_path, monkeypatch):
    """One cache entry holds both fields (the title field's terms marked); a hit is searched from it as it is
    (memory-mapped), its vocabulary split back into the two fields' on its bytes."""
    dataset = load_dataset("scifact")
    first = BM25Retriever(fields="multifield", cache_dir=tmp_path)
    first.index(dataset.corpus)
    run = first.search(dataset.queries, 100).to_dict()
    stats = first.stats()
    assert stats["cache"] == "built"
    entries = sorted(p for p in (tmp_path / "bm25").iterdir() if not p.name.startswith("."))
    assert len(entries) == 1
    assert stats["index_bytes"] == sum(f.stat().st_size for f in entries[0].iterdir() if f.is_file())
    terms = (entries[0] / "terms.txt").read_text(encoding="utf-8").split("\n")
    n_title = sum(t.startswith("\x1f") for t in terms)
    assert 0 < n_title < len(terms) and all(t.startswith("\x1f") for t in terms[:n_title])
    second = BM25Retriever(fields="multifield", cache_dir=tmp_path)
    second.index(dataset.corpus)
    assert second.stats()["cache"] == "hit"
    data = second.backend.sparse_index.data  # the entry's map (np.load's, as a plain view), not a copy:
    assert not data.flags.writeable and isinstance(data.base, np.memmap)
    assert second.search(dataset.queries, 100).to_dict() == run
    monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")  # the Python engine reads the same entry: the same run
    python = BM25Retriever(fields="multifield", cache_dir=tmp_path)
    assert not python.backend.engine.compiled
    python.index(dataset.corpus)
    assert python.stats()["cache"] == "hit" and python.search(dataset.queries, 100).to_dict() == run
    monkeypatch.delenv("HARNESS_BM25_COMPILED")
    flat = BM25Retriever(cache_dir=tmp_path)  # its own entry: the flat index is not the joined one
    flat.index(dataset.corpus)
    assert flat.stats()["cache"] == "built"


def test_the_parameters_name_the_fields_only_when_not_flat():
    """A flat run's parameters (and so its stage keys, bench cells and metrics.json) are what they were."""
    assert "fields" not in BM25Retriever().params()
    assert BM25Retriever(fields="multifield").params()["fields"] == "multifield"


@pytest.mark.parametrize("kwargs, message", [
    (dict(fields="title"), "fields must be one of flat, multifield"),
    (dict(fields="multifield", backend="rank-bm25"), "needs the lucene backend"),
    (dict(fields="multifield", method="bm25l"), "would count twice"),
    (dict(fields="multifield", method="bm25+"), "would count twice"),
])
def test_what_multifield_cannot_do_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BM25Retriever(**kwargs)


def test_the_cli_runs_it_on_scifact(harness_cli, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    done = harness_cli("run", "-r", "bm25", "-p", "fields=multifield", "-o", tmp_path / "results", "--k", "10,100", "-q")
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "results" / "scifact" / "bm25" / "metrics.json").read_text())
    assert document["retriever"]["params"]["fields"] == "multifield"
    assert round(document["metrics"]["NDCG@10"], 4) == 0.6647


@pytest.mark.parametrize("title, text", [(["appl", "pie"], ["appl", "banana", "cake"]), ([], ["appl"]),
                                         (["appl"], []), ([], [])])
def test_a_joined_vocabulary_splits_back_into_the_fields(title, text):
    """As a list (a build's) and as a cached entry's TermList (split on its bytes): the same two vocabularies."""
    from retrievers.bm25.multifield import TITLE_MARK, split_terms
    from retrievers.bm25.sparse_index import TermList

    joined = [TITLE_MARK + t for t in title] + text
    blob = "\n".join(joined).encode("utf-8")
    for terms in (joined, TermList(blob, len(joined))):
        got_title, got_text = split_terms(terms)
        assert (list(got_title), list(got_text)) == (title, text)
        assert all(isinstance(part, TermList) for part in (got_title, got_text)) == isinstance(terms, TermList)


def test_a_title_term_after_a_text_term_is_refused():
    from retrievers.bm25.multifield import TITLE_MARK, split_terms
    from retrievers.bm25.sparse_index import InvalidIndex, TermList

    joined = [TITLE_MARK + "appl", "cake", TITLE_MARK + "pie"]
    for terms in (joined, TermList("\n".join(joined).encode(), 3)):
        with pytest.raises(InvalidIndex, match="not all before"):
            split_terms(terms)
