"""The metric registry: importing this package registers every metric family."""

from harness.evaluation.metrics import (  # noqa: F401
    average_precision, bpref, dcg, judged, ndcg, precision, r_precision, recall, reciprocal_rank, success)
from harness.evaluation.metrics.average_precision import AP, MAP
from harness.evaluation.metrics.base import REGISTRY, Metric, parse_metric, takes_cutoff
from harness.evaluation.metrics.bpref import Bpref
from harness.evaluation.metrics.dcg import DCG
from harness.evaluation.metrics.discounting import SCHEMES
from harness.evaluation.metrics.judged import Judged
from harness.evaluation.metrics.ndcg import NDCG
from harness.evaluation.metrics.precision import Precision
from harness.evaluation.metrics.r_precision import RPrecision
from harness.evaluation.metrics.recall import RCap, Recall
from harness.evaluation.metrics.reciprocal_rank import MRR
from harness.evaluation.metrics.success import Success

DEFAULT_FAMILIES = ("NDCG", "MAP", "Recall", "P", "R_cap", "MRR")
DEFAULT_K = (1, 3, 5, 10, 100, 1000)

__all__ = ["Metric", "parse_metric", "takes_cutoff", "REGISTRY", "NDCG", "DCG", "MAP", "AP", "Precision",
           "Recall", "RCap", "MRR", "RPrecision", "Bpref", "Success", "Judged", "SCHEMES",
           "DEFAULT_FAMILIES", "DEFAULT_K"]
