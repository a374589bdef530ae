"""Dense retrieval: sentence-transformers embeddings, on-disk embedding cache, exact top-k search.

Importing this package does not import torch or sentence-transformers; they load when a model
is first needed to encode (a fully cached run never loads them).
"""

from retrievers.dense.retriever import DenseRetriever

__all__ = ["DenseRetriever"]
