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
from harness.errors import HarnessError

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
    assert str(info.value) == f"{tmp_path / 'bench.toml'}:18: {message}"  # (line 18: the table's line)


def test_cli_refuses_an_unknown_executor(tmp_path):
    result = subprocess.run([sys.executable, "-m", "harness", "bench", str(write_config(tmp_path)), "--executor",
                             "spark"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == 'error: --executor: expected one of local, ray, got "spark"'
    assert not (tmp_path / "results").exists()


PIPELINE = ('[[pipelines]]\nlabel = "fused"\n'
            '[[pipelines.stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n'
            '[[pipelines.stages]]\nname = "mine"\ntype = "retrieve"\nretriever = "run-file"\n'
            'params = {{path = "{run}"}}\n'
            '[[pipelines.stages]]\nname = "rrf"\ntype = "fuse"\ninputs = ["bm25", "mine"]\nmethod = "rrf"\n')


def test_pipeline_cells_run_on_ray_as_locally(ray_local, tmp_path, monkeypatch):
    """A pipeline cell on Ray (it made the whole benchmark fail: the executor asked the pipeline for
    a retriever type, AttributeError: 'Pipeline' object has no attribute 'type')."""
    from dataclasses import replace

    monkeypatch.chdir(tmp_path)
    path = write_config(tmp_path)
    path.write_text(path.read_text() + PIPELINE.format(run=tmp_path / "mine.trec"))
    config = replace(load_config(path), retrievers=())
    results = {}
    for executor in ("local", "ray"):  # each with its own cache: the stage cache's hits would differ
        monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / f"cache-{executor}"))
        results[executor] = run_bench(config.with_output_dir(executor).with_executor(executor))
        assert [(o.status, o.error) for o in results[executor].outcomes] == [("run", None)]
    a, b = tmp_path / "local" / "t" / "tiny" / "fused", tmp_path / "ray" / "t" / "tiny" / "fused"
    docs = [stable(a), stable(b)]
    for doc in docs:
        for stage in doc["stages"]:
            stage.pop("timings")
    assert docs[0] == docs[1] and [s["cache"] for s in docs[1]["stages"]] == ["miss"] * 3
    for name in ("run.trec", "per_query.jsonl"):
        data = [[line for line in (f / name).read_bytes().splitlines() if not line.startswith(b"#")] for f in (a, b)]
        assert data[0] == data[1] and data[0]
    # worked by hand (RRF, k = 60): q1's bm25 ranking d2, d3, d1 (d1 and d3 tie: id descending) and the run
    # file's d1, d3, d2 give d1 and d2 the same 1/61 + 1/63, so d2 (relevant) is first; q2: d4 (relevant)
    assert json.loads((b / "metrics.json").read_text())["metrics"]["P@1"] == 1.0


def test_a_pipeline_cell_asks_for_what_its_stages_ask_for(tmp_path):
    """The executor's resources of a pipeline cell: its components' ``resources`` hooks, each key's
    largest value (a dense stage on cuda: one GPU, as a dense retriever's cell gets)."""
    from harness.bench.cells import cells

    model = tmp_path / "model"
    model.mkdir()
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (model / "model.safetensors").write_bytes(b"fake weights")
    path = write_config(tmp_path)
    path.write_text(path.read_text() + PIPELINE.format(run=tmp_path / "mine.trec").replace(
        'retriever = "bm25"\n', f'retriever = "dense"\nparams = {{model = "{model}", device = "cuda"}}\n'))
    config = load_config(path)
    pipeline_cell = cells(config)[-1]
    assert pipeline_cell.retriever.label == "fused"
    executor = RayExecutor(None, 2.0)
    assert executor.resources(None, pipeline_cell, {"CPU": 8.0}) == {"num_cpus": 2.0, "num_gpus": 1}
    cpu_only = replace_stage_params(config, device="cpu")
    assert executor.resources(None, cells(cpu_only)[-1], {"CPU": 8.0}) == {"num_cpus": 2.0}
    on_actors = replace_stage_params(config, encoder="ray")  # its actors hold the CPUs and GPUs (docs/ray.md)
    assert executor.resources(None, cells(on_actors)[-1], {"CPU": 8.0, "GPU": 1.0}) == {"num_cpus": 0}


def replace_stage_params(config, **params):
    """``config`` with ``params`` set in its first pipeline's first stage."""
    from dataclasses import replace

    pipeline = config.pipelines[0]
    first = replace(pipeline.stages[0], params={**pipeline.stages[0].params, **params})
    return replace(config, pipelines=(replace(pipeline, stages=(first, *pipeline.stages[1:])),))


def test_fail_fast_on_ray_names_the_failing_cell(ray_local, tmp_path, monkeypatch):
    """--fail-fast on Ray raised the task's error alone ('error: <reason>'): no traceback comes back
    from a task and the cell's line is never printed, so nothing said which cell failed."""
    from harness.errors import HarnessError

    monkeypatch.chdir(tmp_path)
    config = load_config(write_config(tmp_path, executor='[executor]\nkind = "ray"\n'), check_retrievers=False)
    (tmp_path / "mine.trec").write_text("q1 Q0 d1 1 3_0 s\n")  # a bad score: only this cell fails
    with pytest.raises(HarnessError) as info:
        run_bench(config, fail_fast=True)
    assert str(info.value).startswith("tiny / mine: ") and "mine.trec" in str(info.value)


def test_a_pipeline_with_a_cuda_reranker_asks_for_a_gpu(tmp_path):
    """A rerank stage's model on cuda gets its cell one GPU, as a dense stage's does: rerankers had
    no ``resources`` hook, so a cross-encoder or bi-encoder stage on cuda ran in a task that Ray gave
    no GPU. Expected: cross-encoder and bi-encoder on cuda: num_gpus 1; on cpu: nothing; ``auto``:
    one GPU only on a cluster that has GPUs (the dense retriever's rule, retrievers/dense/model.py
    gpu_request)."""
    from harness.bench.cells import cells

    model = tmp_path / "model"
    model.mkdir()
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (model / "model.safetensors").write_bytes(b"fake weights")
    executor = RayExecutor(None, 1.0)
    for reranker, params in (("cross-encoder", f'model = "{model}"'), ("bi-encoder", f'model = "{model}"')):
        for device, cluster, expected in (("cuda", {"CPU": 8.0}, {"num_cpus": 1.0, "num_gpus": 1}),
                                          ("cpu", {"CPU": 8.0, "GPU": 1.0}, {"num_cpus": 1.0}),
                                          ("auto", {"CPU": 8.0}, {"num_cpus": 1.0}),
                                          ("auto", {"CPU": 8.0, "GPU": 2.0}, {"num_cpus": 1.0, "num_gpus": 1})):
            path = write_config(tmp_path)
            path.write_text(path.read_text() + PIPELINE.format(run=tmp_path / "mine.trec") +
                            f'[[pipelines.stages]]\nname = "rr"\ntype = "rerank"\ninput = "rrf"\n'
                            f'reranker = "{reranker}"\nparams = {{{params}, device = "{device}"}}\n')
            cell = cells(load_config(path))[-1]
            assert executor.resources(None, cell, cluster) == expected, (reranker, device, cluster)


def test_shortfall_names_what_no_node_of_the_cluster_has():
    from harness.raycluster import shortfall

    assert shortfall({"num_cpus": 1.0, "max_retries": 1}, {"CPU": 2.0}) is None
    assert shortfall({"num_cpus": 2.0, "num_gpus": 1}, {"CPU": 2.0, "GPU": 1.0}) is None
    assert shortfall({"num_cpus": 1.0, "num_gpus": 1}, {"CPU": 2.0}) == "1 GPU (the cluster has 0)"
    assert shortfall({"num_cpus": 4.0}, {"CPU": 2.0}) == "4 CPU (the cluster has 2)"
    assert shortfall({"num_cpus": 0.5, "resources": {"tpu": 1}}, {"CPU": 2.0}) == "1 tpu (the cluster has 0)"


@pytest.mark.parametrize("started_here", [True, False])
def test_a_cell_asking_more_than_the_cluster_has_fails_or_says_it_waits(ray_local, tmp_path, monkeypatch, capsys,
                                                                        started_here):
    """Ray keeps a task that asks for more than any node has pending, and with the workers' logs not
    copied to the driver it says nothing: `[executor] num_cpus = 4` on a 2-CPU Ray (or a model on cuda
    on a cluster without a GPU) hung the bench for good. On the local Ray the bench started (which never
    grows) each such cell now fails at once with one line; on a cluster joined at an address (which an
    autoscaler may grow) a warning names the cell and the shortfall. The ray_local fixture's Ray has 2
    CPUs, so num_cpus = 4 is short by 2; num_cpus = 1 cells are untouched."""
    from harness import raycluster

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(raycluster, "_started_here", started_here)
    config = load_config(write_config(tmp_path, executor='[executor]\nkind = "ray"\nnum_cpus = 4\n'))
    if started_here:
        result = run_bench(config)
        assert [o.status for o in result.outcomes] == ["failed"] * 3
        assert result.outcomes[0].error == ("asks Ray for 4 CPU (the cluster has 2): the local Ray started for this "
                                            "bench never has it (lower [executor] num_cpus, run the model on cpu, "
                                            "or join a cluster with --address)")
        with pytest.raises(HarnessError) as info:
            run_bench(config, fail_fast=True)
        assert str(info.value).startswith("tiny / bm25s: asks Ray for 4 CPU (the cluster has 2)")
    else:  # the tasks wait: cancel them after the warning rather than wait for a node that never comes
        real_wait = ray_local.wait

        def wait_then_cancel(refs, num_returns=1, **kw):
            ready, rest = real_wait(refs, num_returns=num_returns, timeout=2, **kw)
            if ready:
                return ready, rest
            for ref in refs:
                ray_local.cancel(ref)
            raise KeyboardInterrupt

        monkeypatch.setattr(ray_local, "wait", wait_then_cancel)
        with pytest.raises(KeyboardInterrupt):
            run_bench(config)
        err = capsys.readouterr().err
        assert ("warning: tiny / bm25s asks Ray for 4 CPU (the cluster has 2); it waits until a node that has it "
                "joins (an autoscaler's), else stop the bench with Ctrl-C") in err
