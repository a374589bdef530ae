"""Pipelines: retrieve, fuse and rerank stages from TOML, each stage cached and evaluated.

    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.pipeline import load_pipeline, run_pipeline
    dataset = load_dataset("scifact")
    pipeline = load_pipeline("examples/pipeline.toml")
    k_values = [10, 100]  # the evaluator's cutoffs too: run_pipeline's list is what metrics.json records
    evaluator = Evaluator(k_values=k_values)
    experiment, stages = run_pipeline(dataset, pipeline, evaluator, k_values, output_dir="results/x")
"""

from harness.pipeline.cache import StageCache
from harness.pipeline.run import StageError, StageOutcome, run_pipeline
from harness.pipeline.spec import Pipeline, Stage, load_pipeline, parse_pipeline

__all__ = ["Pipeline", "Stage", "load_pipeline", "parse_pipeline", "run_pipeline", "StageCache", "StageError",
           "StageOutcome"]
