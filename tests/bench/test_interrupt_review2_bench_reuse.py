"""A finished cell records the fingerprint of what its numbers were computed from: a run file
rewritten between the benchmark's plan (fingerprints) and the cell's read of it must not leave the
old content's fingerprint beside the new content's numbers (harness/bench/runner.py, run_cell).

Worked example on the tiny dataset (bench_helpers: q1 judges d2, d3; q2 judges d4). Run file A
ranks d4 first for q2 and lacks q1: P@1 = (0 + 1) / 2 = 0.5. Run file B ranks d1 for q2: P@1 = 0.
The first benchmark plans with A's sha256, then the file becomes B, which the cell reads and
scores (0.0, correct). Its metrics.json recorded A's fingerprint, so the next benchmark, with A
back in place, reused the cell: P@1 0.0 instead of 0.5."""

from __future__ import annotations

from harness.bench import load_config, run_bench
from harness.bench.runner import BenchRunner

from .bench_helpers import write_tiny

A = "q2 Q0 d4 1 1.0 s\n"
B = "q2 Q0 d1 1 1.0 s\n"


def test_a_run_file_rewritten_after_the_plan_is_not_reused_under_its_old_fingerprint(tmp_path, monkeypatch):
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n')
    run.write_text(A)
    plan_then_rewrite = BenchRunner.run_cell

    def run_cell(self, cell, expected, datasets):
        run.write_text(B)  # after the plan's fingerprints, before the cell reads the file
        return plan_then_rewrite(self, cell, expected, datasets)

    with monkeypatch.context() as patch:
        patch.setattr(BenchRunner, "run_cell", run_cell)
        first = run_bench(load_config(config))
    assert [(o.status, o.document.metrics["P@1"]) for o in first.outcomes] == [("run", 0.0)]
    run.write_text(A)
    second = run_bench(load_config(config))
    assert [(o.status, o.document.metrics["P@1"]) for o in second.outcomes] == [("run", 0.5)]  # was reused, 0.0
    third = run_bench(load_config(config))
    assert [(o.status, o.document.metrics["P@1"]) for o in third.outcomes] == [("reused", 0.5)]
    run.write_text(B)
    fourth = run_bench(load_config(config))
    assert [(o.status, o.document.metrics["P@1"]) for o in fourth.outcomes] == [("run", 0.0)]


def test_a_pipeline_cell_records_its_stages_params_as_run(tmp_path, monkeypatch):
    """The same for a pipeline cell whose retrieve stage replays the run file (its stage params
    come from the stage's run, as the stage cache recorded them): P@1 0.0, then 0.5, not reused."""
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'cache_dir = "{tmp_path / "cache"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[pipelines]]\nlabel = "p"\n[[pipelines.stages]]\nname = "rf"\ntype = "retrieve"\n'
                      f'retriever = "run-file"\nparams = {{path = "{run}"}}\n')
    run.write_text(A)
    plan_then_rewrite = BenchRunner.run_cell

    def run_cell(self, cell, expected, datasets):
        run.write_text(B)
        return plan_then_rewrite(self, cell, expected, datasets)

    with monkeypatch.context() as patch:
        patch.setattr(BenchRunner, "run_cell", run_cell)
        first = run_bench(load_config(config))
    assert [(o.status, o.document.metrics["P@1"]) for o in first.outcomes] == [("run", 0.0)]
    run.write_text(A)
    assert [(o.status, o.document.metrics["P@1"]) for o in run_bench(load_config(config)).outcomes] == [("run", 0.5)]
    assert [(o.status, o.document.metrics["P@1"]) for o in run_bench(load_config(config)).outcomes] == [("reused", 0.5)]
