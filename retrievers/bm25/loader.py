"""The one place that decides whether the compiled extension runs.

``retrievers.bm25._fastbm25`` (C sources in retrievers/bm25/native/) is compiled when the package
is installed; it is optional, so an install without a C compiler still works, on the pure-Python
path. :func:`extension` is the module when it is built and not turned off with
``HARNESS_BM25_COMPILED=0``, else None. Every compiled piece (tokenizer, Porter stemmer, postings,
scoring, search, corpus digest) is reached through it, so the switch turns them all off together
and the pure-Python path it leaves is the one an install without a compiler runs.
"""

from __future__ import annotations

import os

try:
    from retrievers.bm25 import _fastbm25 as _built
except ImportError:  # not built (no C compiler at install time)
    _built = None

SWITCH = "HARNESS_BM25_COMPILED"


def built_module():
    """The extension module when it was compiled at install time, whatever the switch says (its
    Python glue, compiled.py, is imported only once the engine is chosen)."""
    return _built


def extension():
    """The extension module, or None when it is not built or ``HARNESS_BM25_COMPILED=0``."""
    if _built is None or os.environ.get(SWITCH, "1") == "0":
        return None
    return _built


def porter_implementation() -> str:
    """Which Lucene Porter stemmer the analyzer uses now (recorded in the index cache key)."""
    from retrievers.bm25 import stemming

    return "lucene" if extension() is not None else stemming.FALLBACK_PORTER


def lucene_porter(words: list[str]) -> list[str]:
    """Lucene's Porter stems of ``words``: the compiled stemmer for ASCII words when the extension
    runs, :func:`retrievers.bm25.stemming.fallback_porter` for the rest (for every word without it)."""
    from retrievers.bm25 import stemming

    ext = extension()
    if ext is None:
        return stemming.fallback_porter(words)
    stemmed = ext.stem_ascii(words)
    others = [i for i, s in enumerate(stemmed) if s is None]  # words holding non-ASCII characters
    if others:
        for i, s in zip(others, stemming.fallback_porter([words[i] for i in others])):
            stemmed[i] = s
    return stemmed
