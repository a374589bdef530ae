"""What both engine retrievers share: the corpus fingerprint their stored index is keyed by, query
batches on a thread pool (one engine connection per worker), and the Run built from their hits."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import numpy as np

from harness.datasets.corpus import Corpus
from harness.run import Run
from retrievers.bm25.engines import CHUNK_DOCS, corpus_digest
from retrievers.bm25.lucene_backend import default_threads
from retrievers.texts import corpus_chunks

T = TypeVar("T")

__all__ = ["default_threads", "index_key", "in_batches", "hits_run"]


def index_key(corpus: Corpus, settings: dict) -> str:
    """32 hex digits naming a stored index: sha256 over the corpus's identity and the settings that
    change what is stored. The corpus is named as the BM25 cache names it: by its loader's
    ``fingerprint`` (of the source's content: a ``.gz``'s decompressed bytes) and size when it has one, else by the digest of every
    document (ids, titles, texts)."""
    corpus_id = (f"fingerprint:{corpus.fingerprint}:{len(corpus)}" if corpus.fingerprint is not None
                 else corpus_digest(corpus_chunks(corpus, CHUNK_DOCS)))
    blob = json.dumps({"corpus": corpus_id, "settings": settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def in_batches(work: Callable[[int, int], T], n: int, batch_size: int, n_workers: int) -> list[T]:
    """``[work(start, stop) for each batch of range(n)]`` in order, on ``n_workers`` threads (the
    engines' drivers release the GIL while the engine works)."""
    bounds = [(start, min(start + batch_size, n)) for start in range(0, n, batch_size)]
    if n_workers <= 1 or len(bounds) <= 1:
        return [work(a, b) for a, b in bounds]
    with ThreadPoolExecutor(max_workers=min(n_workers, len(bounds))) as pool:
        return list(pool.map(lambda ab: work(*ab), bounds))


def hits_run(query_ids: Sequence[str], lengths: np.ndarray, codes: np.ndarray, scores: np.ndarray,
             doc_vocab: np.ndarray, vocab_index: dict | None) -> Run:
    """A Run from per-query hit counts and the hits' document codes and scores. The engines return
    each query's hits in canonical order (score descending, ties by document id descending), so
    ``canonical()`` only checks it."""
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    return Run.from_arrays(list(query_ids), offsets, codes, scores, doc_vocab, vocab_index).canonical()
