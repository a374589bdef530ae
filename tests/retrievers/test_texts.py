"""The two named title + text policies (retrievers/texts.py)."""

from __future__ import annotations

from harness.datasets import load_dataset
from harness.datasets.corpus import Corpus
from retrievers.dense.texts import document_texts
from retrievers.texts import dense_texts, lexical_batches, lexical_texts


def test_the_policies_differ_only_at_the_ends_of_untitled_texts():
    corpus = Corpus(["a", "b", "c", "d"], ["T", "", "", " T "], ["x ", " y ", "z", "w"])
    # BM25 (BEIR's lexical input, Corpus.contents): stripped only when there is a title
    assert lexical_texts(corpus) == corpus.contents() == ["T x", " y ", "z", "T  w"]
    # dense (MTEB's DRESModel.encode_corpus): always (title + " " + text).strip()
    assert dense_texts(corpus) == document_texts(corpus) == ["T x", "y", "z", "T  w"]
    assert [t for batch in lexical_batches(corpus, 3) for t in batch] == lexical_texts(corpus)


def test_lexical_texts_are_the_corpus_contents_on_scifact():
    corpus = load_dataset("scifact").corpus
    assert lexical_texts(corpus) == corpus.contents()
    assert sum(a != b for a, b in zip(lexical_texts(corpus), dense_texts(corpus))) == 0  # the same strings on SciFact
