"""The retriever interface, defined in the core (:mod:`harness.retriever`) and re-exported here."""

from harness.retriever import Retriever

__all__ = ["Retriever"]
