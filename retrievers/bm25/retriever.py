"""BM25Retriever: the analyzer and scoring parameters, and the backend that indexes and searches."""

from __future__ import annotations

import os
import warnings

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.plugin_code import entry_code
from harness.run import Run
from harness.retriever import flag
from retrievers.base import Retriever
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.scoring import ScoringParams

BACKENDS = ("lucene", "rank-bm25")
DEFAULT_BACKEND = "lucene"
FIELDS = ("flat", "multifield")  # title + " " + text as one field; title and text as two (retrievers/bm25/multifield.py)
# Earlier name of the lucene backend (it borrowed bm25s's index layout); metrics.json files and
# configs that say backend "bm25s" still run, as the lucene backend.
DEPRECATED_BACKENDS = {"bm25s": "lucene"}


def _number(name: str, value) -> float:
    """A number parameter (a bool is refused: ``k1=true`` is not read as 1.0)."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def backend_name(name: str) -> str:
    """``name`` as one of :data:`BACKENDS` (a deprecated alias mapped, with a DeprecationWarning)."""
    if name in DEPRECATED_BACKENDS:
        new = DEPRECATED_BACKENDS[name]
        warnings.warn(f"BM25 backend {name!r} is now called {new!r}", DeprecationWarning, stacklevel=3)
        return new
    if name not in BACKENDS:
        raise ValueError(f"unknown BM25 backend {name!r}; choose one of {', '.join(BACKENDS)}")
    return name


class BM25Retriever(Retriever):
    """BM25 over title + " " + text (retrievers/texts.py), or, with ``fields="multifield"``, over the title and
    the text as two fields, each with its own statistics, their scores summed (Anserini's multifield BEIR runs;
    retrievers/bm25/multifield.py).

    Scoring: ``k1`` (0.9), ``b`` (0.4), ``method`` (``lucene``, ``robertson``, ``atire``, ``bm25l``,
    ``bm25+``), ``idf_method`` (default: the method's own), ``delta`` (BM25L/BM25+, 0.5),
    ``lossy_lengths`` (Lucene's one-byte document lengths; default on for ``lucene``).
    Analysis: ``tokenizer`` (``standard`` Lucene-like, or ``simple`` \\w+), ``stopwords``
    (``lucene``, None, or a list), ``stemmer`` (``porter``, another PyStemmer algorithm, or None),
    ``possessive``, ``lowercase``.
    Operation (not part of :meth:`params`): ``cache`` / ``cache_dir`` (index cache; see
    retrievers/bm25/cache.py), ``n_threads`` (query batches; default all usable cores).
    """

    name = "bm25"

    def __init__(self, backend: str = DEFAULT_BACKEND, k1: float = 0.9, b: float = 0.4, method: str = "lucene",
                 idf_method: str | None = None, delta: float = 0.5, lossy_lengths: bool | None = None,
                 tokenizer: str = "standard", stopwords: str | list[str] | None = "lucene",
                 stemmer: str | None = "porter", possessive: bool = True, lowercase: bool = True,
                 cache: bool = True, cache_dir: str | os.PathLike | None = None, n_threads: int | None = None,
                 fields: str = "flat"):
        backend = backend_name(backend)
        if fields not in FIELDS:
            raise ValueError(f"fields must be one of {', '.join(FIELDS)}, got {fields!r}")
        self.fields = fields
        self.backend_name = backend
        possessive, lowercase, cache = (flag(n, v) for n, v in
                                        (("possessive", possessive), ("lowercase", lowercase), ("cache", cache)))
        lossy_lengths = flag("lossy_lengths", lossy_lengths, none_ok=True)
        self.scoring = ScoringParams(k1=_number("k1", k1), b=_number("b", b), method=method, idf_method=idf_method,
                                     delta=_number("delta", delta), lossy_lengths=lossy_lengths)
        self.k1, self.b = self.scoring.k1, self.scoring.b
        self.analyzer = Analyzer(tokenizer=tokenizer, stopwords=stopwords, stemmer=stemmer, possessive=possessive,
                                 lowercase=lowercase)
        if backend == "rank-bm25":
            if fields != "flat":
                raise ValueError("fields='multifield' needs the lucene backend; rank-bm25 indexes one field")
            if method != "lucene" or idf_method is not None or lossy_lengths is not None:
                raise ValueError("method, idf_method and lossy_lengths apply to the lucene backend only; "
                                 "rank-bm25 always uses its BM25Okapi formula")
            from retrievers.bm25.rank_bm25_backend import RankBM25Backend

            self._backend = RankBM25Backend(self.k1, self.b, self.analyzer)
        else:
            from retrievers.bm25.lucene_backend import LuceneBackend

            code_key, cache = entry_code(type(self), cache)  # (a plugin's subclass: its code keys its indexes)
            self._backend = LuceneBackend(self.scoring, self.analyzer, cache=cache, cache_dir=cache_dir,
                                          n_threads=n_threads, fields=fields, code_key=code_key)

    def params(self) -> dict:
        if self.backend_name == "rank-bm25":
            scoring = {"k1": self.k1, "b": self.b, "method": "rank-bm25 BM25Okapi"}
        else:
            scoring = self.scoring.as_dict()
        # (fields only when not the default: a flat run's parameters, and so its keys, are those it always had)
        fields = {"fields": self.fields} if self.fields != "flat" else {}
        return {"backend": self.backend_name, **scoring, **self.analyzer.params(), **fields}

    @property
    def backend(self):
        return self._backend

    def index(self, corpus: Corpus) -> None:
        self._backend.index(corpus)

    def search(self, queries: Queries, k: int) -> Run:
        return self._backend.search(queries, k)

    def stats(self) -> dict:
        """The index cache's status, the versions of the libraries that built the index (``index_versions``:
        a cache hit's are its entry's, null for an entry written before they were recorded) and, when the index
        is cached, its size on disk (``index_bytes``)."""
        written = getattr(self._backend, "cache_written", None)
        if written is not None:
            written()  # the entry is written in the background: its size once it is complete
        status, entry = getattr(self._backend, "cache_status", None), getattr(self._backend, "cache_entry", None)
        out = {"cache": status} if status else {}
        if hasattr(self._backend, "index_versions"):  # (a hit's: its entry's, null where it kept none)
            out["index_versions"] = self._backend.index_versions
        try:
            if entry is not None:
                out["index_bytes"] = sum(f.stat().st_size for f in entry.iterdir() if f.is_file())
        except OSError:  # the cache could not be written (read-only disk): size unknown
            pass
        return out
