"""What the dense model reads: document and query texts, and a content hash of them.

Documents are retrievers/texts.py's ``dense_text``: ``(title + " " + text).strip()``, as MTEB's
retrieval evaluator builds them. Queries are passed through unchanged, as MTEB does.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from harness.datasets.corpus import Corpus
from retrievers.texts import dense_texts


def document_texts(corpus: Corpus) -> list[str]:
    return dense_texts(corpus)


def content_hash(ids: Sequence[str], texts: Sequence[str]) -> str:
    """sha256 over the (id, text) pairs in order, each field length-prefixed so that no two
    different lists hash alike. Row order matters: cached embeddings are stored in this order."""
    if len(ids) != len(texts):
        raise ValueError(f"ids and texts must have the same length, got {len(ids)} and {len(texts)}")
    digest = hashlib.sha256()
    for doc_id, text in zip(ids, texts):
        for field in (doc_id, text):
            data = field.encode("utf-8")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
    return digest.hexdigest()


def length_order(texts: Sequence[str]) -> np.ndarray:
    """Indices of ``texts`` longest first (ties in input order), the order sentence-transformers
    and MTEB encode in so that each batch holds texts of similar length (little padding)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    return np.argsort(-lengths, kind="stable")
