"""Pipelines: retrieve, fuse and rerank stages from TOML, each stage cached and evaluated.

    from harness.pipeline import load_pipeline, run_pipeline
    pipeline = load_pipeline("configs/pipeline.toml")
    experiment, stages = run_pipeline(dataset, pipeline, evaluator, [10, 100], output_dir="results/x")
"""

from harness.pipeline.cache import StageCache
from harness.pipeline.run import StageError, StageOutcome, run_pipeline
from harness.pipeline.spec import Pipeline, Stage, load_pipeline, parse_pipeline

__all__ = ["Pipeline", "Stage", "load_pipeline", "parse_pipeline", "run_pipeline", "StageCache", "StageError",
           "StageOutcome"]
