"""retrieval-harness: a benchmark harness for search.

Data flows one way::

    dataset (corpus, queries, qrels) -> retriever -> run -> evaluator -> report -> compare / check
"""

__version__ = "0.1.0"
