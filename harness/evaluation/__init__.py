"""The evaluator and its metrics."""

from harness.evaluation.evaluator import (WHOLE_RANKING_DEPTH, EvaluationResult, Evaluator, default_depth,
                                         depth_warning, evaluate, metrics_for)
from harness.evaluation.metrics import DEFAULT_FAMILIES, DEFAULT_K, Metric, parse_metric

__all__ = ["Evaluator", "EvaluationResult", "WHOLE_RANKING_DEPTH", "default_depth", "depth_warning", "evaluate", "metrics_for", "Metric", "parse_metric",
           "DEFAULT_FAMILIES", "DEFAULT_K"]
