"""retrieval-harness: a benchmark harness for search.

Data flows one way::

    dataset (corpus, queries, qrels) -> retriever -> run -> evaluator -> report -> compare / check

The names a script or notebook starts from are here, imported on first use (``import harness`` alone
imports nothing more: the command line's start-up stays as it was)::

    from harness import Qrels, Run, evaluate
    result = evaluate(Run.from_dict(results), Qrels.from_dict(qrels), ["NDCG@10", "Recall@100"])
    result.means                       # {"NDCG@10": ..., "Recall@100": ...}, as pytrec_eval's per-query mean
"""

__version__ = "0.1.0"

# name -> the module defining it (PEP 562: looked up by __getattr__ below, once, then kept in the module)
_EXPORTS = {
    "Run": "harness.run",
    "Qrels": "harness.qrels",
    "Evaluator": "harness.evaluation",
    "EvaluationResult": "harness.evaluation",
    "evaluate": "harness.evaluation",
    "load_dataset": "harness.datasets",
    "Dataset": "harness.datasets",
    "run_experiment": "harness.experiment",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
