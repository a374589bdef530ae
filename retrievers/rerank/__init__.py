"""Rerankers: rescore the top ``depth`` candidates of each query of a run (a second stage).

Importing this package does not import torch or sentence-transformers.
"""

from retrievers.rerank.base import Candidates, Reranker

__all__ = ["Candidates", "Reranker"]
