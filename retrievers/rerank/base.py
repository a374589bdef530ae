"""The reranker interface, defined in the core (:mod:`harness.reranker`) and re-exported here."""

from harness.reranker import Candidates, Reranker

__all__ = ["Candidates", "Reranker"]
