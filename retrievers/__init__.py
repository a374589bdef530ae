"""Retrievers: index a corpus, search queries, return a Run.

Each is registered in the ``retrieval_harness.retrievers`` entry-point group (pyproject.toml) and
found by the core through :mod:`harness.registry`, which is re-exported here.
"""

from harness.registry import available, create
from harness.retriever import Retriever

__all__ = ["Retriever", "create", "available"]
