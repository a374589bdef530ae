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
