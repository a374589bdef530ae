"""The metric registry: importing this package registers every metric family."""

from harness.evaluation.metrics import average_precision, ndcg, precision, recall, reciprocal_rank  # noqa: F401
from harness.evaluation.metrics.average_precision import MAP
from harness.evaluation.metrics.base import REGISTRY, Metric, parse_metric
from harness.evaluation.metrics.ndcg import NDCG
from harness.evaluation.metrics.precision import Precision
from harness.evaluation.metrics.recall import RCap, Recall
from harness.evaluation.metrics.reciprocal_rank import MRR

DEFAULT_FAMILIES = ("NDCG", "MAP", "Recall", "P", "R_cap", "MRR")
DEFAULT_K = (1, 3, 5, 10, 100, 1000)

__all__ = ["Metric", "parse_metric", "REGISTRY", "NDCG", "MAP", "Precision", "Recall", "RCap", "MRR",
           "DEFAULT_FAMILIES", "DEFAULT_K"]
