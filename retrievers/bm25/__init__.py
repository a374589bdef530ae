"""The BM25 retriever (retriever.py) and its backends.

* ``lucene`` (default; formerly ``bm25s``, still accepted): Lucene's exact BM25 arithmetic on an
  eager sparse index (bm25s's layout), an analyzer matching Anserini's, a disk cache and threaded
  search; compiled hot loops when the extension is built (loader.py, engines.py), pure Python
  otherwise. With the defaults it reproduces Anserini's BEIR "flat" BM25 runs.
* ``rank-bm25``: rank-bm25's BM25Okapi, the slow simple reference (its own idf and formula).

Both index title + " " + text and use the same analyzer. Defaults k1 = 0.9, b = 0.4 (Anserini's).
"""

from retrievers.bm25.retriever import BACKENDS, DEFAULT_BACKEND, BM25Retriever

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "BM25Retriever"]
