"""`harness bench --executor ray`: each cell a Ray task; the files equal the local executor's, and
cells finished by one executor are reused by the other. Runs on a local Ray (2 CPUs, one per
session: the ``ray_local`` fixture) over the 4-document dataset of bench_helpers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.bench import load_config, run_bench
from harness.bench.executors import LocalExecutor, RayExecutor, executor_for

from .bench_helpers import write_tiny

# Fields that differ between any two runs (clock, timings); everything else must be equal.
VOLATILE = ("created", "timings", "throughput", "retriever_stats", "versions", "efficiency", "query_latency_ms")


def write_config(tmp_path: Path, executor: str = "") -> Path:
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d1 1 3.0 s\nq1 Q0 d3 2 2.0 s\nq1 Q0 d2 3 1.0 s\n")
    path = tmp_path / "bench.toml"
    path.write_text(f'name = "t"\nk = [1, 3]\nmetrics = ["NDCG@3", "P@1"]\noutput_dir = "results"\n'
                    f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                    f'[[retrievers]]\ntype = "bm25"\nlabel = "bm25s"\n'
                    f'[[retrievers]]\ntype = "bm25"\nlabel = "rank"\nparams = {{backend = "rank-bm25", k1 = 0.9}}\n'
                    f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n' + executor)
    return path


def stable(folder: Path) -> dict:
    doc = json.loads((folder / "metrics.json").read_text())
    for key in VOLATILE:
        doc.pop(key, None)
    for key in ("executor", "output_dir"):  # how and where it ran, not what it measured
        doc["bench"]["config"].pop(key, None)
    return doc


def test_ray_cells_equal_local_cells_and_are_reused(ray_local, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # output_dir "results" is relative: the tasks must run in this directory
    config = load_config(write_config(tmp_path))
    local = run_bench(config.with_output_dir("local"))
    on_ray = run_bench(config.with_output_dir("ray").with_executor("ray"))
    assert local.counts["run"] == on_ray.counts["run"] == 3 and not on_ray.failed
    for cell in ("bm25s", "rank", "mine"):
        a, b = tmp_path / "local" / "t" / "tiny" / cell, tmp_path / "ray" / "t" / "tiny" / cell
        assert stable(a) == stable(b)
        for name in ("run.trec", "per_query.jsonl"):  # run.trec's "#" ir_metadata header holds timings
            data = [[line for line in (f / name).read_bytes().splitlines() if not line.startswith(b"#")] for f in (a, b)]
            assert data[0] == data[1] and data[0]
    # a value worked by hand: the run file ranks d1 (not relevant) first for q1 and lacks q2, so P@1 = 0
    mine = json.loads((tmp_path / "ray" / "t" / "tiny" / "mine" / "metrics.json").read_text())
    assert mine["metrics"]["P@1"] == 0.0
    assert json.loads((tmp_path / "ray" / "t" / "bench.json").read_text())["config"]["executor"]["kind"] == "ray"
    # finished cells are reused whichever executor finished them
    again = run_bench(config.with_output_dir("ray"))
    assert again.counts == {"run": 0, "reused": 3, "failed": 0, "pending": 0}


def test_a_failing_cell_is_recorded_by_the_ray_executor(ray_local, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(write_config(tmp_path, executor='[executor]\nkind = "ray"\n'), check_retrievers=False)
    (tmp_path / "mine.trec").write_text("q1 Q0 d1 1 3_0 s\n")  # a bad score: only this cell fails
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["run", "run", "failed"]
    assert "mine.trec" in result.outcomes[2].error


def test_executor_config_and_choice(tmp_path):
    config = load_config(write_config(tmp_path, executor='[executor]\nkind = "ray"\naddress = "auto"\nnum_cpus = 2\n'))
    assert config.executor.to_dict() == {"kind": "ray", "address": "auto", "num_cpus": 2.0}
    chosen = executor_for(config.executor)
    assert isinstance(chosen, RayExecutor) and (chosen.address, chosen.num_cpus) == ("auto", 2.0)
    assert isinstance(executor_for(config.with_executor("local").executor), LocalExecutor)
    assert config.with_executor(None, "ray://h:10001").executor.address == "ray://h:10001"
    assert "executor" not in load_config(write_config(tmp_path)).to_dict()  # the default is not recorded


@pytest.mark.parametrize("table, message", [
    ('kind = "spark"', 'executor.kind: expected one of local, ray, got "spark"'),
    ("num_cpus = 0", "executor.num_cpus: expected a positive number, got 0.0"),
    ('host = "x"', "executor.host: unknown key (expected one of: address, kind, num_cpus)"),
])
def test_bad_executor_tables(tmp_path, table, message):
    from harness.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, executor=f"[executor]\n{table}\n"))
    assert str(info.value) == f"{tmp_path / 'bench.toml'}: {message}"


def test_cli_refuses_an_unknown_executor(tmp_path):
    result = subprocess.run([sys.executable, "-m", "harness", "bench", str(write_config(tmp_path)), "--executor",
                             "spark"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == 'error: --executor: expected one of local, ray, got "spark"'
    assert not (tmp_path / "results").exists()
