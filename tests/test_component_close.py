"""close() of the components a command made (harness/closing.py): each once, after the work that used them.

A plugin holding a client or a connection pool had no hook to release it: the harness never told a
component it was done with it (in a benchmark, one instance serves every dataset, then lingers). The
planted plugin below appends each call to a log file (one line per event, the instance's number first),
so the order of index, search and close, and the number of closes, can be read back.

Worked example (the three-document dataset of tests/test_plugin_code.py): the planted retriever scores
document i as -i, so d1 (judged relevant) ranks first: NDCG@10 = 1.0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_plugin_code import REPO, harness_cli, write_dataset

PLUGIN = '''
import itertools
from pathlib import Path

import numpy as np

from harness.reranker import Reranker
from harness.run import Run
from retrievers import Retriever

_numbers = itertools.count(1)


class Logged(Retriever):
    name = "logged"

    def __init__(self, log: str, watch: str = "", fail_close: bool = False, fail_search: bool = False):
        self.log, self.watch, self.fail_close, self.fail_search = log, watch, fail_close, fail_search
        self.number = next(_numbers)

    def note(self, event):
        with open(self.log, "a") as handle:
            handle.write(f"{self.number} {event}\\n")

    def params(self):
        return {"fail_close": self.fail_close}

    def index(self, corpus):
        self._ids = list(corpus.ids)
        self.note("index")

    def search(self, queries, k):
        self.note("search")
        if self.fail_search:
            raise RuntimeError("search broke")
        return Run.from_dict({q: {d: float(-i) for i, d in enumerate(self._ids)} for q in queries.ids})

    def close(self):
        self.note("close" + (" after metrics.json" if self.watch and Path(self.watch).exists() else ""))
        if self.fail_close:
            raise RuntimeError("the client was gone")


class LoggedReranker(Reranker):
    name = "logged-reranker"

    def __init__(self, log: str):
        self.log = log

    def score(self, candidates, queries, corpus):
        with open(self.log, "a") as handle:
            handle.write("rerank score\\n")
        return -candidates.doc_rows.astype(np.float64)

    def close(self):
        with open(self.log, "a") as handle:
            handle.write("rerank close\\n")
'''


@pytest.fixture
def setup(tmp_path):
    root = tmp_path / "plugins"
    (root / "closing_plugin").mkdir(parents=True)
    (root / "closing_plugin" / "__init__.py").write_text(PLUGIN)
    return root, write_dataset(tmp_path / "tiny"), tmp_path / "events.log"


def bench_config(tmp_path: Path, log: Path, *datasets: Path) -> Path:
    """A benchmark of the planted retriever (label ``logged``) over ``datasets`` (labels one, two, ...)."""
    labels = ("one", "two")
    listed = ", ".join(f'{{path = "{d}", label = "{labels[i]}"}}' for i, d in enumerate(datasets))
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "b"\nk = [10]\noutput_dir = "{tmp_path / "results"}"\ndatasets = [{listed}]\n'
                      f'[[retrievers]]\ntype = "closing_plugin:Logged"\nlabel = "logged"\n'
                      f'params = {{log = "{log}"}}\n')
    return config


def events(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def run_cli(args, root, tmp_path, ok=True) -> subprocess.CompletedProcess:
    """``harness ARGS`` with the plugins under ``root`` importable; ``ok``: asserted to exit 0."""
    if ok:
        return harness_cli(args, root, tmp_path / "cache", tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)]),
           "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path)


def test_harness_run_closes_its_retriever_once_after_the_result_is_written(setup, tmp_path):
    root, data, log = setup
    metrics = tmp_path / "res" / "tiny" / "x" / "metrics.json"
    run_cli(["run", "-d", str(data), "-r", "closing_plugin:Logged", "-p", f"log={log}", "-p", f"watch={metrics}",
             "-o", str(tmp_path / "res"), "--name", "x", "--k", "10", "-q"], root, tmp_path)
    assert events(log) == ["1 index", "1 search", "1 close after metrics.json"]
    assert json.loads(metrics.read_text())["metrics"]["NDCG@10"] == pytest.approx(1.0)


def test_a_close_that_raises_is_one_warning_and_the_run_succeeds(setup, tmp_path):
    root, data, log = setup
    proc = run_cli(["run", "-d", str(data), "-r", "closing_plugin:Logged", "-p", f"log={log}", "-p", "fail_close=true",
                    "-o", str(tmp_path / "res"), "--name", "x", "--k", "10"], root, tmp_path)
    assert "warning: 'logged': close() failed (RuntimeError: the client was gone)" in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "res" / "tiny" / "x" / "metrics.json").exists() and events(log)[-1] == "1 close"


def test_a_failed_run_still_closes_its_retriever(setup, tmp_path):
    root, data, log = setup
    proc = run_cli(["run", "-d", str(data), "-r", "closing_plugin:Logged", "-p", f"log={log}", "-p", "fail_search=true",
                    "-o", str(tmp_path / "res"), "--name", "x", "--k", "10"], root, tmp_path, ok=False)
    assert proc.returncode != 0 and "search broke" in proc.stderr
    assert events(log) == ["1 index", "1 search", "1 close"]


def test_a_pipeline_closes_each_stages_component_once_after_its_last_stage(setup, tmp_path):
    root, data, log = setup
    config = tmp_path / "p.toml"
    config.write_text(f'name = "pp"\n'
                      f'[[stages]]\nname = "a"\ntype = "retrieve"\nretriever = "closing_plugin:Logged"\n'
                      f'params = {{log = "{log}"}}\n'
                      f'[[stages]]\nname = "b"\ntype = "retrieve"\nretriever = "closing_plugin:Logged"\n'
                      f'params = {{log = "{log}", fail_close = true}}\n'
                      f'[[stages]]\nname = "r"\ntype = "rerank"\ninput = "a"\n'
                      f'reranker = "closing_plugin:LoggedReranker"\ndepth = 3\nparams = {{log = "{log}"}}\n'
                      f'[[stages]]\nname = "f"\ntype = "fuse"\ninputs = ["r", "b"]\nmethod = "rrf"\n')
    proc = run_cli(["run", "--pipeline", str(config), "-d", str(data), "-o", str(tmp_path / "res"), "--name", "p",
                    "--k", "3"], root, tmp_path)
    got = events(log)
    assert sorted(got) == ["1 close", "1 index", "1 search", "2 close", "2 index", "2 search", "rerank close",
                           "rerank score"]
    assert got.index("1 close") > got.index("2 search") and got.index("rerank close") > got.index("rerank score")
    assert "warning: 'logged': close() failed (RuntimeError: the client was gone)" in proc.stderr.splitlines()


def test_a_bench_closes_its_retriever_once_after_the_last_cell(setup, tmp_path):
    root, data, log = setup
    config = bench_config(tmp_path, log, data, write_dataset(tmp_path / "tiny2"))
    run_cli(["bench", str(config), "-q"], root, tmp_path)
    assert events(log) == ["1 index", "1 search", "1 index", "1 search", "1 close"]  # one instance for both datasets
    run_cli(["bench", str(config), "-q"], root, tmp_path)  # both cells reused: made for the plan, then closed
    assert events(log)[5:] == ["1 close"]  # (another process: its instance number 1 again)


def test_harness_rerank_closes_its_reranker(setup, tmp_path):
    root, data, log = setup
    first = tmp_path / "first.trec"
    first.write_text("q1 Q0 d3 1 3.0 x\nq1 Q0 d2 2 2.0 x\nq1 Q0 d1 3 1.0 x\n")
    run_cli(["rerank", "--run", str(first), "-d", str(data), "--reranker", "closing_plugin:LoggedReranker",
             "-p", f"log={log}", "--depth", "3", "-o", str(tmp_path / "out.trec"), "-q"], root, tmp_path)
    assert events(log) == ["rerank score", "rerank close"]
    assert (tmp_path / "out.trec").read_text().split()[2] == "d1"


def test_python_callers_own_their_components(setup, tmp_path, monkeypatch):
    """run_experiment never closes the retriever it is given, nor run_pipeline given components; run_pipeline
    closes the ones it makes itself."""
    root, data, log = setup
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    import closing_plugin

    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.experiment import run_experiment
    from harness.pipeline import load_pipeline, run_pipeline
    from harness.pipeline.run import create_components

    ds = load_dataset(str(data))
    retriever = closing_plugin.Logged(log=str(log))
    run_experiment(ds, retriever, Evaluator(["NDCG@10"]), [10])
    assert not [e for e in events(log) if "close" in e]
    config = tmp_path / "p.toml"
    config.write_text(f'name = "pp"\n[[stages]]\nname = "a"\ntype = "retrieve"\nretriever = "closing_plugin:Logged"\n'
                      f'params = {{log = "{log}"}}\n')
    spec = load_pipeline(config)
    given = create_components(spec)
    run_pipeline(ds, spec, Evaluator(["NDCG@10"]), [10], components=given)
    assert not [e for e in events(log) if "close" in e]
    log.unlink()
    run_pipeline(ds, spec, Evaluator(["NDCG@10"]), [10])  # (a stage cache hit: made, not searched, closed)
    assert [e.split()[1] for e in events(log)] == ["close"]


def test_harness_serve_closes_its_retriever_when_it_stops(setup, tmp_path):
    from harness.serving import serve_process

    root, data, log = setup
    env = {"PYTHONPATH": os.pathsep.join([str(root), str(REPO)]), "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    with serve_process("--dataset", str(data), "--retriever", "closing_plugin:Logged", "--param", f"log={log}",
                       env=env) as url:
        import urllib.request

        with urllib.request.urlopen(f"{url}/search?q=x&k=2", timeout=30) as answer:
            assert [hit["id"] for hit in json.loads(answer.read())["hits"]] == ["d1", "d2"]
        assert events(log) == ["1 index", "1 search"]
    assert events(log) == ["1 index", "1 search", "1 close"]  # (stopped by SIGTERM, as Ctrl-C stops it)


def test_a_bench_runner_run_again_makes_new_retrievers_after_closing_the_first(setup, tmp_path, monkeypatch):
    from harness.bench.config import load_config
    from harness.bench.runner import BenchRunner

    root, data, log = setup
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    runner = BenchRunner(load_config(bench_config(tmp_path, log, data)), force=True)
    runner.run()
    runner.run()
    numbers = [int(e.split()[0]) for e in events(log)]
    assert [e.split(" ", 1)[1] for e in events(log)] == ["index", "search", "close"] * 2
    assert numbers[:3] == [numbers[0]] * 3 and numbers[3:] == [numbers[0] + 1] * 3  # a closed one is never reused


def test_a_ray_task_closes_the_retriever_it_made_for_its_cell(setup, tmp_path, monkeypatch):
    """The body of a Ray task (harness.bench.executors._run_cell_remote), called here in process: its fresh
    runner's retriever is closed once the cell is written, in the task's own process."""
    from harness.bench.cells import cells
    from harness.bench.config import load_config
    from harness.bench.executors import _run_cell_remote
    from harness.bench.runner import BenchRunner, _Datasets

    root, data, log = setup
    monkeypatch.syspath_prepend(str(root))
    config = load_config(bench_config(tmp_path, log, data))
    cell = cells(config)[0]
    planner = BenchRunner(config)
    expected = planner.cell_fingerprint(cell, _Datasets())
    planner.close()
    log.unlink()
    document, error, _, _ = _run_cell_remote(config, cell, expected, str(tmp_path), str(tmp_path / "cache"))
    assert error is None and document.metrics["NDCG@10"] == pytest.approx(1.0)
    assert [e.split(" ", 1)[1] for e in events(log)] == ["index", "search", "close"]
