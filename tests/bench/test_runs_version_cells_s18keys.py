"""A bump of RUNS_VERSION alone (harness/versions.py: a change that moves runs) reruns every bench cell once:
a cell of another ``versions.runs_version`` is no finished cell (harness.bench.cells.is_finished). Before,
only NUMBERS_VERSION was checked and a bump of RUNS_VERSION alone reused every cell with its old run. A
cell that records no runs_version (written before metrics.json recorded it, when RUNS_VERSION was 2, the
first) is of version 2 and stays reused: no cell reruns for this change itself."""

from __future__ import annotations

import json

import harness.bench.cells
import harness.versions
from harness.bench import load_config, run_bench

from .bench_helpers import write_tiny


def _setup(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")
    (tiny / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d3 2 1.0 s\n")
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [10]\nmetrics = ["NDCG@10"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n')
    return config


def _statuses(config):
    return [o.status for o in run_bench(load_config(config)).outcomes]


def test_a_runs_version_bump_alone_reruns_the_cell_once(tmp_path, monkeypatch):
    config = _setup(tmp_path)
    assert _statuses(config) == ["run"]
    assert _statuses(config) == ["reused"]
    metrics_json = tmp_path / "results" / "t" / "tiny" / "mine" / "metrics.json"
    assert json.loads(metrics_json.read_text())["versions"]["runs_version"] == harness.versions.RUNS_VERSION
    bumped = harness.versions.RUNS_VERSION + 1  # (NUMBERS_VERSION left as it is)
    monkeypatch.setattr(harness.versions, "RUNS_VERSION", bumped)
    monkeypatch.setattr(harness.bench.cells, "RUNS_VERSION", bumped, raising=False)
    assert _statuses(config) == ["run"]  # (was ["reused"]: the old run's numbers)
    assert json.loads(metrics_json.read_text())["versions"]["runs_version"] == bumped
    assert _statuses(config) == ["reused"]


def test_a_cell_recording_no_runs_version_is_of_the_first_and_reused(tmp_path):
    config = _setup(tmp_path)
    assert _statuses(config) == ["run"]
    metrics_json = tmp_path / "results" / "t" / "tiny" / "mine" / "metrics.json"
    doc = json.loads(metrics_json.read_text())
    del doc["versions"]["runs_version"]  # (a cell written before metrics.json recorded it)
    metrics_json.write_text(json.dumps(doc))
    assert harness.versions.RUNS_VERSION == harness.bench.cells.FIRST_RUNS_VERSION == 2
    assert _statuses(config) == ["reused"]
