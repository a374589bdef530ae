"""Random impacts for tests and benchmarks: seeded JsonVectorCollection files for a corpus, and a
brute-force scipy.sparse reference of the impact search."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def random_vectors(ids, rng: np.random.Generator, vocab: int, lo: int, hi: int, integer: bool = False) -> list[dict]:
    """For each id, ``lo``..``hi`` distinct terms of a ``vocab``-term vocabulary (Zipf-ish draws),
    with float32 weights, half of them multiples of 1/4 (or small integers), as ``{"id", "vector"}`` objects."""
    p = 1.0 / np.arange(1, vocab + 1) ** 0.8
    p /= p.sum()
    out = []
    for ident in ids:
        n = int(rng.integers(lo, hi + 1))
        terms = rng.choice(vocab, size=n, replace=False, p=p)
        if integer:
            w = rng.integers(1, 8, size=n).tolist()
        else:
            g = rng.gamma(1.5, 0.7, size=n)
            coarse = rng.random(n) < 0.5  # half the weights in quarters: equal scores (ties) occur
            g[coarse] = np.maximum(np.round(g[coarse] * 4) / 4, 0.25)
            w = [float(np.float32(x)) for x in g]
        out.append({"id": ident, "vector": {f"t{t}": x for t, x in zip(terms.tolist(), w)}})
    return out


def run_pairs(run) -> dict:
    """{query id: [(doc id, float32 score)]} of a Run, in its order."""
    out = {}
    for i, q in enumerate(run.query_ids.tolist()):
        s, e = run.offsets[i], run.offsets[i + 1]
        out[q] = list(zip(run.doc_vocab[run.doc_codes[s:e]].tolist(), run.scores[s:e].astype(np.float32).tolist()))
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def brute_force(doc_rows: list[dict], query_rows: list[dict], corpus_ids: list[str], k: int) -> dict:
    """{query id: [(doc id, float32 score)]}: scores = float32(D @ q) with D and q in float64
    (scipy.sparse, sorted indices: the sum runs over ascending term ids), scores > 0, ranked by
    score descending, ties by document id descending (the evaluator's rule)."""
    vocab: dict[str, int] = {}
    for row in doc_rows:
        for t in row["vector"]:
            vocab.setdefault(t, len(vocab))
    vocab_sorted = {t: i for i, t in enumerate(vocab)}  # ids in first-seen order, as the reader numbers them
    pos = {d: i for i, d in enumerate(corpus_ids)}
    r, c, v = [], [], []
    for row in doc_rows:
        for t, w in row["vector"].items():
            r.append(pos[row["id"]]); c.append(vocab_sorted[t]); v.append(np.float32(w))
    D = sp.csr_matrix((np.asarray(v, np.float32).astype(np.float64), (r, c)), shape=(len(corpus_ids), len(vocab)))
    D.sort_indices()
    out = {}
    for row in query_rows:
        q = np.zeros(len(vocab))
        for t, w in row["vector"].items():
            if t in vocab_sorted:
                q[vocab_sorted[t]] += np.float32(w)
        scores = (D @ q).astype(np.float32)
        hits = [(corpus_ids[i], scores[i]) for i in np.flatnonzero(scores > 0)]
        hits.sort(key=lambda h: (h[1], h[0]), reverse=True)
        out[row["id"]] = hits[:k]
    return out


def bm25_terms(dataset, n_threads: int = 1):
    """The BM25 (lucene backend) index of ``dataset`` and its queries' term ids: (retriever, index,
    offsets, term ids) -- repeated query terms repeat, as BM25 search counts them."""
    from retrievers.bm25 import BM25Retriever
    from retrievers.bm25.search import CompiledSearcher

    bm25 = BM25Retriever(cache=False, n_threads=n_threads)
    bm25.index(dataset.corpus)
    index, searcher = bm25.backend.sparse_index, bm25.backend._searcher
    texts = list(dataset.queries.texts)
    if isinstance(searcher, CompiledSearcher):
        offsets, term_ids = searcher.query_terms(texts)
    else:
        per_query = searcher.queries_term_ids(texts)
        offsets = np.concatenate([[0], np.cumsum([len(t) for t in per_query])]).astype(np.int64)
        term_ids = np.asarray([i for t in per_query for i in t], dtype=np.int32)
    return bm25, index, np.asarray(offsets, np.int64), np.asarray(term_ids, np.int32)


def bm25_as_impacts(dataset, folder: Path, n_threads: int = 1) -> tuple[Path, Path]:
    """BM25 written as impacts: each document's vector holds its BM25 posting scores, each query's
    its terms' counts (docs.jsonl.gz, queries.jsonl.gz in ``folder``). Impact search over them
    computes BM25 (repeated query terms: an exact product instead of BM25's float32 one)."""
    _, index, offsets, term_ids = bm25_terms(dataset, n_threads)
    csc = sp.csc_matrix((index.data, index.indices, index.indptr), shape=(index.n_docs, index.n_terms))
    csr = csc.tocsr()
    csr.sort_indices()
    ids = dataset.corpus.id_array.tolist()
    terms = index.terms
    docs = []
    for d in range(index.n_docs):
        s, e = csr.indptr[d], csr.indptr[d + 1]
        docs.append({"id": ids[d], "vector": {terms[t]: float(w) for t, w in zip(csr.indices[s:e].tolist(),
                                                                                 csr.data[s:e].tolist())}})
    queries = []
    for q, qid in enumerate(dataset.queries.ids):
        found, counts = np.unique(term_ids[offsets[q]:offsets[q + 1]], return_counts=True)
        queries.append({"id": qid, "vector": {terms[t]: int(c) for t, c in zip(found.tolist(), counts.tolist())}})
    return write_jsonl(folder / "docs.jsonl.gz", docs), write_jsonl(folder / "queries.jsonl.gz", queries)
