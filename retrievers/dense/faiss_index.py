"""Optional faiss index (faiss-cpu) for large corpora.

``factory`` is a faiss index-factory string with inner-product metric: ``Flat`` (exact, faiss's
own BLAS kernel), ``HNSW32`` or ``IVF1024,Flat`` (approximate), etc. faiss breaks score ties
arbitrarily, so each query asks for ``k + tie_margin`` hits which are then ordered by the
evaluator's rule (score desc, id desc) and cut to k: the result matches exact search unless more
than ``tie_margin`` documents tie at the k-th score (or the index is approximate).
"""

from __future__ import annotations

import numpy as np

from harness.errors import HarnessError
from retrievers.dense.exact import l2_normalize, rerank_candidates


class FaissIndex:
    def __init__(self, docs: np.ndarray, cosine: bool, factory: str = "Flat", tie_margin: int = 16):
        try:
            import faiss
        except ImportError:
            raise HarnessError("index='faiss' needs the faiss-cpu package (pip install faiss-cpu)") from None
        data = np.ascontiguousarray(l2_normalize(docs) if cosine else np.asarray(docs, dtype=np.float32))
        try:
            index = faiss.index_factory(data.shape[1], factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as exc:
            raise HarnessError(f"bad faiss index factory string {factory!r}: {exc}") from None
        if not index.is_trained:
            index.train(data)
        index.add(data)
        self.index, self.cosine, self.tie_margin, self.n_docs = index, cosine, tie_margin, data.shape[0]

    def search(self, queries: np.ndarray, k: int, id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(doc indices, scores), rows in canonical order; -1 marks a missing hit (approximate indexes)."""
        q = np.ascontiguousarray(l2_normalize(queries) if self.cosine else np.asarray(queries, dtype=np.float32))
        k = min(k, self.n_docs)
        scores, idx = self.index.search(q, min(k + self.tie_margin, self.n_docs))
        return rerank_candidates(idx, scores, k, id_rank)
