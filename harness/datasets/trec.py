"""Assemble a test collection from a BEIR-style corpus and TREC topics + TREC qrels.

    load_trec_dataset("path/to/corpus-folder", "topics.401-450.txt", "qrels.401-450.txt")

The corpus is a folder holding ``corpus.jsonl[.gz]`` (or that file itself); topics are classic
``<top>`` files or ``qid<TAB>text`` TSV; qrels are 4-column TREC (or BEIR 3-column tsv).
"""

from __future__ import annotations

from pathlib import Path

from harness.datasets.beir import assemble, find_file, load_corpus
from harness.datasets.corpus_cache import source_checksum
from harness.datasets.corpus import Dataset
from harness.errors import InputError
from harness.formats.trec import read_qrels, read_topics


def load_trec_dataset(corpus: str | Path, topics: str | Path, qrels: str | Path, split: str = "test",
                      name: str | None = None, field: str = "title") -> Dataset:
    corpus, topics, qrels = Path(corpus), Path(topics), Path(qrels)
    if corpus.is_dir():
        corpus_path = find_file(corpus, "corpus.jsonl")
    elif corpus.is_file():
        corpus_path = corpus
    else:
        raise InputError("corpus folder or file not found", corpus)
    judgments = read_qrels(qrels)
    queries = read_topics(topics, field=field)
    documents = load_corpus(corpus_path)
    label = name or (corpus.name if corpus.is_dir() else corpus_path.parent.name)
    return assemble(label, split, documents, queries, judgments,
                    {p.name: source_checksum(p) for p in (corpus_path, topics, qrels)})
