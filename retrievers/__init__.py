"""Retrievers: index a corpus, search queries, return a Run."""

from retrievers.base import Retriever
from retrievers.registry import available, create

__all__ = ["Retriever", "create", "available"]
