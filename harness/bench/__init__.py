"""Benchmark matrices from TOML configs: datasets x retrievers, cached cells, a leaderboard."""

from harness.bench.config import BenchConfig, ConfigError, DatasetSpec, RetrieverSpec, load_config, parse_config
from harness.bench.runner import BenchResult, run_bench

__all__ = ["BenchConfig", "BenchResult", "ConfigError", "DatasetSpec", "RetrieverSpec", "load_config",
           "parse_config", "run_bench"]
