"""The retriever interface: ``index(corpus)`` then ``search(queries, k) -> Run``.

It lives in the core because the core is what calls it; the ``retrievers`` package (and every
plugin) implements it and re-exports it as ``retrievers.Retriever``.
"""

from __future__ import annotations

import functools
import types
from abc import ABC, abstractmethod

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run

MAX_COUNT = 2**63 - 1  # ranks and counts are int64


def count(name: str, value, alternative: str = "") -> int:
    """``value`` as an int when it is an integer in [1, 2^63 - 1] (numpy's integers too); otherwise a
    ValueError naming ``name`` and the value (``alternative``: what else is accepted, e.g. ``", or None
    for the deepest cutoff"``). A bool is not taken for 1 or 0, nor 2.5 for 2, nor ``"10"`` for 10. The
    one check of a search's ``k`` and a rerank's or an experiment's ``depth``."""
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_COUNT:
        raise ValueError(f"{name} must be an integer >= 1 and at most 2^63 - 1 (ranks are int64){alternative}, "
                         f"got {value!r}")
    return int(value)


def check_queries(queries) -> None:
    """A TypeError unless ``queries`` is a :class:`~harness.datasets.corpus.Queries` (a list of texts or a
    ``{id: text}`` dict failed deep inside each retriever, with an AttributeError)."""
    if not isinstance(queries, Queries):
        raise TypeError(f"queries must be a harness Queries (Queries(ids, texts)), got {type(queries).__name__}"
                        + (": Queries(list(d), list(d.values())) makes one of a {id: text} dict"
                           if isinstance(queries, dict) else ""))


_INDEXED = "_harness_indexed"  # set on an instance by its checked index(): search() may be called
_UNSET = object()


def check_corpus(corpus) -> None:
    """A TypeError unless ``corpus`` is a :class:`~harness.datasets.corpus.Corpus` (a list of texts or a
    ``{id: text}`` dict failed deep inside each retriever's index(), with an AttributeError)."""
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus must be a harness Corpus (Corpus(ids, titles, texts)), got {type(corpus).__name__}")


def _checked_index(index):
    """``index`` with its corpus checked first (:func:`check_corpus`), that records on the instance whether
    it completed (search() is refused until it has)."""
    @functools.wraps(index)
    def checked(self, *args, **kwargs):
        if args or "corpus" in kwargs:
            check_corpus(args[0] if args else kwargs["corpus"])
        _set_indexed(self, False)  # (a failed or interrupted index leaves no half-built index to search)
        try:
            out = index(self, *args, **kwargs)
        except BaseException:
            _set_indexed(self, False)  # (a subclass's index() that failed after its parent's completed)
            raise
        _set_indexed(self, True)
        return out

    checked.__harness_checked__ = True
    return checked


def _set_indexed(retriever, value: bool) -> None:
    object.__setattr__(retriever, _INDEXED, value)  # (a frozen dataclass's too; Retriever has no __slots__)


def check_search(retriever, queries, k=_UNSET) -> int | None:
    """Refuse a search ``retriever`` cannot answer as asked: ``queries`` not a :class:`Queries` (a
    TypeError), ``k`` not an integer in [1, 2^63 - 1] (a ValueError naming it: :func:`count`), or no
    completed ``index()`` yet when its ``index_required`` (a RuntimeError naming the retriever). Returns
    ``k`` as an int. Run before the code of every :class:`Retriever` subclass's ``search``, once per call."""
    check_queries(queries)
    k = None if k is _UNSET else count("k", k)
    if retriever.index_required and not getattr(retriever, _INDEXED, False):
        raise RuntimeError(f"retriever {retriever.name!r} ({type(retriever).__name__}): index(corpus) must be "
                           "called before search(queries, k)")
    return k


def _checked_search(search):
    """``search`` with its arguments checked first (:func:`check_search`), ``k`` passed on as an int."""
    @functools.wraps(search)
    def checked(self, queries, k=_UNSET, *args, **kwargs):
        if k is _UNSET:  # (a plugin's own default k)
            check_search(self, queries)
            return search(self, queries, *args, **kwargs)
        return search(self, queries, check_search(self, queries, k), *args, **kwargs)

    checked.__harness_checked__ = True
    return checked


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

    Every subclass's ``search`` (a plugin's too) is called with its arguments checked, once per call
    (:func:`check_search`): ``queries`` a :class:`Queries`, ``k`` an integer in [1, 2^63 - 1] (numpy's
    integers accepted, passed on as an int; a bool, a float, a str or None refused), and, unless
    ``index_required`` is False, :meth:`index` completed first; ``index``'s ``corpus`` a :class:`Corpus`
    (:func:`check_corpus`). The checks wrap the methods a subclass defines (``__init_subclass__``), so an
    implementation written against this interface needs none.
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
    # False when search() needs no index() first (a run file, a live service: the index is elsewhere);
    # otherwise search() before index() is one RuntimeError naming the retriever.
    index_required: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name, wrap in (("index", _checked_index), ("search", _checked_search)):
            method = cls.__dict__.get(name)
            if isinstance(method, types.FunctionType) and not getattr(method, "__harness_checked__", False):
                setattr(cls, name, wrap(method))

    @abstractmethod
    def index(self, corpus: Corpus) -> None:
        """Prepare to search ``corpus`` (build or load an index)."""

    @abstractmethod
    def search(self, queries: Queries, k: int) -> Run:
        """Return the top ``k`` documents of each query, in canonical order (see harness.run). Called with
        ``queries`` a :class:`Queries`, ``k`` an int >= 1, after :meth:`index` (:func:`check_search`)."""

    def params(self) -> dict:
        return {}

    def close(self) -> None:
        """Release what this retriever holds (a client, a connection pool, a model on a device). The harness's
        commands call it once when they are done with it: ``harness run`` once its result is written (or it
        failed), ``harness bench`` after its last cell, ``harness serve`` when it stops, a pipeline after its
        last stage; :func:`harness.experiment.run_experiment` does not (its caller owns the retriever). An
        exception it raises is a warning, never the command's failure. Default: nothing."""
