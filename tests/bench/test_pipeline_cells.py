"""A pipeline cell's fingerprint covers what its stages resolve to, not only the parsed pipeline: a
changed run file behind a retrieve stage reruns the cell (as it does a run-file retriever's cell)."""

from __future__ import annotations

from harness.bench import load_config, run_bench

from .bench_helpers import write_tiny


def test_a_changed_run_file_behind_a_pipeline_stage_reruns_the_cell(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))  # the stage cache
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d1 1 3.0 s\nq2 Q0 d1 1 1.0 s\n")  # nothing relevant at rank 1: P@1 = 0
    config = tmp_path / "bench.toml"
    config.write_text(
        f'name = "t"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
        f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
        f'[[pipelines]]\nlabel = "pipe"\n'
        f'[[pipelines.stages]]\nname = "r"\ntype = "retrieve"\nretriever = "run-file"\nparams = {{path = "{run}"}}\n')
    first = run_bench(load_config(config))
    assert [o.status for o in first.outcomes] == ["run"] and first.board["tables"]["P@1"]["rows"]["tiny"]["pipe"] == 0.0
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["reused"]

    run.write_text("q1 Q0 d2 1 3.0 s\nq2 Q0 d4 1 1.0 s\n")  # both relevant at rank 1 (bench_helpers.QRELS): P@1 = 1
    again = run_bench(load_config(config))
    assert [o.status for o in again.outcomes] == ["run"]
    assert again.board["tables"]["P@1"]["rows"]["tiny"]["pipe"] == 1.0
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["reused"]
