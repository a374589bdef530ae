"""``bi-encoder``: rescore candidates with a dense model, exactly as the dense retriever scores them.

The model, its settings and the embedding cache are the dense retriever's (a
:class:`retrievers.dense.DenseRetriever` built from the same parameters does the encoding), so:

* queries are encoded as the dense retriever encodes them: all the dataset's queries, through the
  query cache entry a dense run of the same dataset already wrote;
* ``documents="corpus"`` (default): the corpus embeddings come from the dense retriever's cache
  entry; when it is missing, the whole corpus is encoded and cached as ``harness run --retriever
  dense`` would, so a later dense run is free. Reranking then encodes only the queries (nothing at
  all when they are cached too);
* ``documents="candidates"``: only the candidate documents are encoded (cached under their own
  key), for a corpus too large to encode whole. Embeddings depend slightly on which texts share a
  batch, so scores may then differ from the dense run's in the last float32 bits.

Scores are the dense retriever's: float32 inner products of the (for ``score="cos"``)
L2-normalized embeddings (:func:`retrievers.dense.exact.l2_normalize`), computed as one matrix
product per block of ``query_block`` queries against the block's candidate documents, as the exact
search computes a block; ties rank by document id descending. With ``documents="corpus"`` the
reranked run equals the dense run restricted to the candidates: same ids, same scores, same order
(tests/retrievers/test_rerank_bi_encoder.py checks it on SciFact).
"""

from __future__ import annotations

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from retrievers.dense import DenseRetriever
from retrievers.dense.exact import PAD, l2_normalize
from retrievers.dense.texts import document_texts
from retrievers.rerank.base import Candidates, Reranker

DOCUMENTS = ("corpus", "candidates")


def candidate_scores(queries: np.ndarray, docs: np.ndarray, candidates: Candidates, doc_rows: np.ndarray,
                     cosine: bool, query_block: int) -> np.ndarray:
    """float32 score of each candidate entry: ``query . document`` (normalized first for cosine).

    ``queries`` holds every query's embedding (rows as ``candidates.query_rows``), ``docs`` the
    documents' (rows as ``doc_rows``, one per entry). Queries go in blocks of ``query_block``
    rows, each multiplied with the union of its entries' documents in one product.
    """
    queries = np.asarray(queries, dtype=np.float32)
    if cosine:
        queries = l2_normalize(queries)
    entry_q = candidates.entry_query_rows
    out = np.empty(len(doc_rows), dtype=np.float32)
    block_of_entry = entry_q // query_block
    for block in np.unique(block_of_entry).tolist():
        entries = np.flatnonzero(block_of_entry == block)
        union, column = np.unique(doc_rows[entries], return_inverse=True)
        # a width that is a multiple of PAD (zero rows added): BLAS computes trailing columns with other
        # code, so equal documents scored unequally in the last bit (retrievers/dense/exact.py's rule)
        block_docs = np.zeros((-(-len(union) // PAD) * PAD, docs.shape[1]), dtype=np.float32)
        block_docs[:len(union)] = docs[union]
        if cosine:
            block_docs = l2_normalize(block_docs)
        q0 = block * query_block
        scores = queries[q0:q0 + query_block] @ block_docs.T
        out[entries] = scores[entry_q[entries] - q0, column]
    out[np.isnan(out)] = -1.0  # as the dense retriever (retrievers/dense/exact.py) and MTEB report a NaN score
    return out


class BiEncoderReranker(Reranker):
    """Rescore candidates with a sentence-transformers bi-encoder (default: the shipped MiniLM).

    Parameters: ``documents`` (``corpus`` or ``candidates``, see the module docstring) and every
    parameter of the dense retriever (docs/dense.md): ``model``, ``max_seq_length``, prompts,
    ``normalize``, ``score``, ``batch_size``, ``device``, ``cache``, ``cache_dir``, ``query_block``...
    """

    name = "bi-encoder"

    def __init__(self, documents: str = "corpus", **dense_params):
        if documents not in DOCUMENTS:
            raise ValueError(f"documents must be one of {', '.join(DOCUMENTS)}, got {documents!r}")
        if dense_params.get("index", "exact") != "exact":
            raise ValueError("the bi-encoder reranker scores exactly; it takes no index parameter")
        self.documents = documents
        self.dense = DenseRetriever(**dense_params)

    def params(self) -> dict:
        params = self.dense.params()
        params.pop("index")
        return {**params, "documents": self.documents}

    def stats(self) -> dict:
        return self.dense.stats()

    def resources(self, cluster: dict) -> dict:
        """What a benchmark cell with this reranker asks a Ray cluster for: its dense model's."""
        return self.dense.resources(cluster)

    def score(self, candidates: Candidates, queries: Queries, corpus: Corpus) -> np.ndarray:
        dense = self.dense
        q = dense.encode("queries", queries.ids, queries.texts, dense.query_prompt)
        if self.documents == "corpus":
            docs = dense.encode("documents", corpus.ids, document_texts(corpus), dense.document_prompt)
            rows = candidates.doc_rows
        else:
            subset, rows = candidates.documents(corpus)
            docs = dense.encode("documents", subset.ids, document_texts(subset), dense.document_prompt)
        return candidate_scores(q, docs, candidates, rows, dense.score == "cos", dense.query_block)
