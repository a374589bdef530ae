"""A value a retriever's constructor refuses in a bench config (``backend = "nope"``: the config's reading
checks types and known keys, not what a constructor accepts) fails the cell, and its error now names the
config's file and line, as ``harness run --pipeline`` does for a pipeline file. Before, the error was
``pipeline 'p', stage 's1': ValueError: unknown BM25 backend 'nope'; ...``: no file, no line (review s17fresh)."""

from __future__ import annotations

from harness.bench import run_bench
from harness.bench.config import load_config, parse_config

# line 14 is `params = { backend = "nope" }` of the pipeline's first stage (pipelines[0].stages[0]); 16 once the
# test has put output_dir and a blank line above [[datasets]]
CONFIG = """name = "p"
metrics = ["NDCG@10"]

[[datasets]]
name = "scifact"

[[pipelines]]
label = "p"

[[pipelines.stages]]
name = "s1"
type = "retrieve"
retriever = "bm25"
params = { backend = "nope" }
"""
REASON = "ValueError: unknown BM25 backend 'nope'; choose one of lucene, rank-bm25"


def test_a_pipeline_stage_refused_by_its_constructor_names_the_config_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(CONFIG.replace("[[datasets]]", f'output_dir = "{tmp_path / "out"}"\n\n[[datasets]]', 1))
    outcome, = run_bench(load_config(path)).outcomes
    assert outcome.status == "failed"
    assert outcome.error == f"{path}:16: pipelines[0].stages[0].params: pipeline 'p', stage 's1': {REASON}"


def test_a_config_built_in_python_names_no_file():
    # (no TOML file to point into: the message is as before)
    from harness.bench.runner import BenchRunner

    config = parse_config({"name": "p", "metrics": ["NDCG@10"], "datasets": [{"name": "scifact"}],
                           "pipelines": [{"label": "p", "stages": [{"name": "s1", "type": "retrieve", "retriever": "bm25",
                                                                    "params": {"backend": "nope"}}]}]})
    runner = BenchRunner(config)
    try:
        runner.pipeline_params(config.pipelines[0])
    except Exception as exc:  # noqa: BLE001
        assert str(exc) == f"pipeline 'p', stage 's1': {REASON}"
    else:
        raise AssertionError("the constructor's refusal was not raised")
