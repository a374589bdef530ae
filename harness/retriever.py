"""The retriever interface: ``index(corpus)`` then ``search(queries, k) -> Run``.

It lives in the core because the core is what calls it; the ``retrievers`` package (and every
plugin) implements it and re-exports it as ``retrievers.Retriever``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run


def flag(name: str, value, none_ok: bool = False) -> bool | None:
    """A true/false parameter of a component, as given: ``True``/``False`` (numpy's bool too), or None
    with ``none_ok``; anything else is a ValueError naming it. ``bool()`` would read the string
    ``"False"`` (Python's spelling typed as ``--param normalize=False``, or a config's ``"false"``)
    as true, silently doing the opposite of what was asked."""
    import numpy as np

    if value is None and none_ok:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


class Retriever(ABC):
    """A search system under test.

    Subclasses set ``name`` and implement :meth:`index` and :meth:`search`. :meth:`params` returns
    the settings that identify the system; they are recorded in metrics.json.
    """

    name: str = "retriever"
    # True when the retriever times each query itself: its ``stats()`` then holds
    # ``query_latency_ms`` ({query id: ms}), the efficiency block's "per request" latencies.
    measures_latency: bool = False
    # Queries per timed search() call when the harness measures latency itself (docs/efficiency.md):
    # each call's time is shared among its queries. None: all queries in one call, for a retriever
    # whose search() keeps per-call state (a cache keyed on the queries, statistics of the call,
    # its own thread pool over the queries); its latencies are then one share, the mean.
    search_batch_size: int | None = 32
    # The evaluator's semantics (harness.evaluation.semantics.Semantics) of the experiment running this
    # retriever, set by the harness before search(); None outside one. A retriever that cuts a ranking
    # it did not score (the run-file retriever) cuts it in that order: under trec_eval-9 scores equal in
    # float32 tie, and the larger document id ranks first.
    ranking_semantics = None
    # False when a run depends on more than ``params()`` tell before the search (a live service's index):
    # a pipeline stage of it is computed on every run and its run not stored in the stage cache, where no
    # lookup could find it (the http retriever's key holds the sha256 of its answers, known only after).
    cache_runs: bool = True

    @abstractmethod
    def index(self, corpus: Corpus) -> None:
        """Prepare to search ``corpus`` (build or load an index)."""

    @abstractmethod
    def search(self, queries: Queries, k: int) -> Run:
        """Return the top ``k`` documents of each query, in canonical order (see harness.run)."""

    def params(self) -> dict:
        return {}
