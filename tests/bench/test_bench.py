"""`harness bench`: cells, leaderboard, reuse of finished cells, reruns on change, failures, resume
after a kill. Everything runs on a 4-document dataset whose values are worked by hand."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.bench import load_config, run_bench
from harness.bench.config import check_dataset_folders
from harness.bench.runner import BenchRunner
from harness.errors import ConfigError

from .bench_helpers import HANG_ENV, HangingRetriever, write_tiny

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "examples" / "plugin"
HERE = Path(__file__).resolve().parent

# Worked by hand for the tiny dataset (see test_run_file.py / test_plugin.py):
# idf-overlap ranks ideally (NDCG@3 = P@1 = 1); the run file ranks q1 d1, d3, d2 and lacks q2.
NDCG3_RUN_FILE = ((1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))) / 2


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d1 1 3.0 s\nq1 Q0 d3 2 2.0 s\nq1 Q0 d2 3 1.0 s\n")
    return tmp_path, tiny, run


def write_config(tmp_path: Path, body: str, head: str = "") -> Path:
    path = tmp_path / "bench.toml"
    path.write_text(f'name = "t"\nk = [1, 3]\nmetrics = ["NDCG@3", "P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                    + head + body)
    return path


def two_retrievers(tiny: Path, run: Path, overlap_params: str = "{}") -> str:
    return (f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
            f'[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "overlap"\n'
            f'params = {overlap_params}\n'
            f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n')


def mtime(path: Path) -> int:
    return path.stat().st_mtime_ns


def test_cells_and_leaderboard(setup):
    tmp_path, tiny, run = setup
    config = load_config(write_config(tmp_path, two_retrievers(tiny, run)))
    result = run_bench(config)
    assert [(o.cell.name, o.status) for o in result.outcomes] == [("tiny / overlap", "run"), ("tiny / mine", "run")]
    out = tmp_path / "results" / "t"
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["datasets"] == ["tiny"] and board["retrievers"] == ["overlap", "mine"]
    ndcg = board["tables"]["NDCG@3"]
    assert ndcg["rows"]["tiny"]["overlap"] == 1.0
    assert ndcg["rows"]["tiny"]["mine"] == pytest.approx(NDCG3_RUN_FILE, abs=1e-12)
    assert ndcg["average"] == ndcg["rows"]["tiny"]  # one dataset: the average is that row
    assert board["tables"]["P@1"]["rows"]["tiny"] == {"overlap": 1.0, "mine": 0.0}
    md = (out / "leaderboard.md").read_text()
    assert "| dataset | overlap | mine |" in md and "| tiny | **1.0000** | 0.3100 |" in md
    assert "| **average** | **1.0000** | 0.3100 |" in md and "## Timings" in md

    cell = json.loads((out / "tiny" / "overlap" / "metrics.json").read_text())
    assert cell["bench"]["name"] == "t" and len(cell["bench"]["fingerprint"]) == 64
    assert cell["bench"]["config"] == config.to_dict()
    assert cell["bench"]["retriever"] == {"type": "harness_example_plugin:IdfOverlapRetriever", "label": "overlap",
                                          "params": {}}
    assert set(cell["throughput"]) == {"index_s", "search_s", "docs_indexed_per_s", "queries_per_s",
                                       "docs_encoded_per_s"}
    assert cell["throughput"]["docs_encoded_per_s"] == cell["retriever_stats"]["docs_encoded_per_s"]
    assert {"load_s", "index_s", "search_s", "evaluate_s"} <= set(cell["timings"])
    for name in ("metrics.md", "per_query.jsonl", "run.trec"):
        assert (out / "tiny" / "overlap" / name).is_file()

    # The cell holds exactly what a plain experiment with the same retriever gives.
    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.experiment import run_experiment
    from retrievers import create

    evaluator = Evaluator(k_values=[1, 3])
    exp = run_experiment(load_dataset(str(tiny)), create("harness_example_plugin:IdfOverlapRetriever"), evaluator, [1, 3])
    assert cell["metrics"] == exp.result.means

    manifest = json.loads((out / "bench.json").read_text())
    assert manifest["config"] == config.to_dict() and manifest["counts"]["run"] == 2

    # report.html beside leaderboard.md: the same means, the dataset's judgments found from its path.
    page = (out / "report.html").read_text()
    means = dict(re.findall(r'data-system="([^"]+)" data-mean="([^"]+)"', page)[:2])
    assert float(means["overlap"]) == 1.0 and float(means["mine"]) == pytest.approx(NDCG3_RUN_FILE, abs=1e-12)
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page).group(1))
    explorer = data["datasets"][0]
    assert explorer["label"] == "tiny" and explorer["systems"] == ["overlap", "mine"]
    assert explorer["judged"] is not None and len(explorer["judged"]) == 2
    assert [c["status"] for c in manifest["cells"]] == ["run", "run"]


def test_finished_cells_are_reused_and_changes_rerun_only_their_cells(setup):
    tmp_path, tiny, run = setup
    path = write_config(tmp_path, two_retrievers(tiny, run))
    run_bench(load_config(path))
    out = tmp_path / "results" / "t" / "tiny"
    before = {label: mtime(out / label / "metrics.json") for label in ("overlap", "mine")}

    again = run_bench(load_config(path))
    assert [o.status for o in again.outcomes] == ["reused", "reused"]
    assert {label: mtime(out / label / "metrics.json") for label in before} == before
    assert again.board["tables"]["NDCG@3"]["rows"]["tiny"]["overlap"] == 1.0  # read back from the cell

    # A changed retriever param reruns that retriever's cell only.
    path = write_config(tmp_path, two_retrievers(tiny, run, overlap_params="{min_df = 2}"))
    changed = run_bench(load_config(path))
    assert [o.status for o in changed.outcomes] == ["run", "reused"]

    # A changed run file (its sha256 is in the retriever's params) reruns the run-file cell.
    run.write_text("q1 Q0 d2 1 3.0 s\n")
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["reused", "run"]

    # Changed judgments (the dataset checksums) rerun every cell of the dataset.
    with open(tiny / "qrels" / "test.tsv", "a") as handle:
        handle.write("q2\td3\t1\n")
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["run", "run"]

    # Evaluation settings are part of the fingerprint too; --force reruns regardless.
    path = write_config(tmp_path, two_retrievers(tiny, run, overlap_params="{min_df = 2}"), head="depth = 2\n")
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["run", "run"]
    assert [o.status for o in run_bench(load_config(path), force=True).outcomes] == ["run", "run"]
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["reused", "reused"]


def test_a_corrupt_or_foreign_metrics_json_is_not_trusted(setup):
    tmp_path, tiny, run = setup
    path = write_config(tmp_path, two_retrievers(tiny, run))
    run_bench(load_config(path))
    cell = tmp_path / "results" / "t" / "tiny"
    (cell / "overlap" / "metrics.json").write_text('{"metrics": {"NDCG@3": 0.5')  # truncated
    doc = json.loads((cell / "mine" / "metrics.json").read_text())
    doc["bench"]["fingerprint"] = "0" * 64
    (cell / "mine" / "metrics.json").write_text(json.dumps(doc))
    result = run_bench(load_config(path))
    assert [o.status for o in result.outcomes] == ["run", "run"]
    assert json.loads((cell / "overlap" / "metrics.json").read_text())["metrics"]["NDCG@3"] == 1.0


def test_dry_run_plans_without_writing(setup):
    tmp_path, tiny, run = setup
    result = run_bench(load_config(write_config(tmp_path, two_retrievers(tiny, run))), dry_run=True)
    assert result.counts["pending"] == 2 and not (tmp_path / "results").exists()


def test_failed_cells_are_reported_and_the_rest_runs(setup):
    tmp_path, tiny, run = setup
    (tmp_path / "absent").mkdir()  # a folder with no dataset in it: its cells fail when it is loaded
    body = (f'datasets = [{{path = "{tiny}", label = "tiny"}}, {{path = "{tmp_path / "absent"}", label = "absent"}}]\n'
            '[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "overlap"\n'
            '[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "broken"\n'
            'params = {min_df = 0}\n')
    result = run_bench(load_config(write_config(tmp_path, body)))
    status = {o.cell.name: (o.status, o.error) for o in result.outcomes}
    assert status["tiny / overlap"] == ("run", None)
    # (the file and line of the params the constructor refused: line 12, `params = {min_df = 0}`)
    assert status["tiny / broken"] == ("failed", f"{tmp_path / 'bench.toml'}:12: retrievers[1].params: retriever "
                                                 "'broken': ValueError: min_df must be an integer >= 1, got 0")
    assert status["absent / overlap"][0] == "failed" and "absent" in status["absent / overlap"][1]
    assert status["absent / broken"][0] == "failed"
    table = result.board["tables"]["NDCG@3"]
    assert table["rows"]["tiny"] == {"overlap": 1.0, "broken": None}
    assert table["average"] == {"overlap": None, "broken": None}  # not a value on every dataset
    md = (tmp_path / "results" / "t" / "leaderboard.md").read_text()
    assert "| tiny | 1.0000 | - |" in md and "| **average** | - | - |" in md
    assert f"failed: {tmp_path / 'bench.toml'}:12: retrievers[1].params: retriever 'broken'" in md
    with pytest.raises(Exception, match="min_df must be an integer"):
        run_bench(load_config(write_config(tmp_path, body)), fail_fast=True)


def test_cache_dir_is_set_for_retrievers_during_the_bench(setup, monkeypatch):
    tmp_path, tiny, _ = setup
    monkeypatch.delenv("HARNESS_CACHE_DIR", raising=False)
    spec = f"{HangingRetriever.__module__}:HangingRetriever"
    body = (f'cache_dir = "{tmp_path / "cache"}"\ndatasets = [{{path = "{tiny}"}}]\n'
            f'[[retrievers]]\ntype = "{spec}"\nlabel = "hang"\n')
    runner = BenchRunner(load_config(write_config(tmp_path, body)))
    result = runner.run()
    assert runner._retrievers["hang"].seen_cache_dir == str(tmp_path / "cache")
    assert "HARNESS_CACHE_DIR" not in os.environ
    # Every document at score 1: ties ordered by id descending (d4 d3 d2 d1); q1's relevant d2, d3 at
    # ranks 3 and 2: DCG@3 = 1/log2(3) + 2/log2(4); q2's d4 at rank 1.
    q1 = (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert result.board["tables"]["NDCG@3"]["rows"]["tiny"]["hang"] == pytest.approx((q1 + 1) / 2, abs=1e-12)


# --------------------------------------------------------------------------- the command line
def harness(*args, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, **kwargs)


def cli_env(**extra) -> dict:
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGIN_DIR), str(HERE), str(REPO)])
    return env


def test_cli_config_error_is_one_line_exit_2(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\nparams = {k1 = "abc"}\n')
    proc = harness("bench", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [  # (line 5: the params holding k1)
        f'error: {path}:5: retrievers[0].params.k1: expected a number, got "abc"']


def test_cli_failed_cell_exits_1_with_summary(setup):
    tmp_path, tiny, run = setup
    body = (f'datasets = ["{tiny}"]\n[[retrievers]]\ntype = "run-file"\nparams = {{path = "{tmp_path / "gone.trec"}"}}\n')
    proc = harness("bench", str(write_config(tmp_path, body)), "--quiet", env=cli_env())
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip().splitlines() == [
        f"bench t: 1 cells (0 run, 0 reused, 1 failed) in {proc.stdout.split(' in ')[1].split(' s;')[0]} s; "
        f"leaderboard: {tmp_path / 'results' / 't' / 'leaderboard.md'}"]
    board = json.loads((tmp_path / "results/t/leaderboard.json").read_text())
    assert board["cells"][0]["error"] == (f"{tmp_path / 'bench.toml'}:8: retrievers[0].params: retriever 'run-file': "
                                          f"ValueError: run file not found: {tmp_path / 'gone.trec'}")


def test_cli_resumes_after_being_killed(setup):
    tmp_path, tiny, _ = setup
    body = (f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
            '[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "overlap"\n'
            '[[retrievers]]\ntype = "bench_helpers:HangingRetriever"\nlabel = "hang"\n')
    config = write_config(tmp_path, body)
    out = tmp_path / "results" / "t"
    first = out / "tiny" / "overlap" / "metrics.json"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "bench", str(config)], cwd=REPO,
                            env=cli_env(**{HANG_ENV: "1"}), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not first.exists():  # the first cell finishes; the second hangs in index()
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode() if proc.poll() else "timeout"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    stamp = mtime(first)
    assert not (out / "tiny" / "hang" / "metrics.json").exists() and not (out / "leaderboard.md").exists()
    assert not list(out.rglob("*.tmp"))  # atomic writes: no half-written file left behind

    rerun = harness("bench", str(config), env=cli_env())
    assert rerun.returncode == 0, rerun.stderr
    lines = rerun.stdout.splitlines()
    assert lines[0].startswith("[1/2] tiny / overlap: reused, NDCG@3 1.0000, P@1 1.0000")
    assert lines[1].startswith("[2/2] tiny / hang: run, NDCG@3 ")
    assert lines[-1].startswith("bench t: 2 cells (1 run, 1 reused, 0 failed)")
    assert mtime(first) == stamp
    assert (out / "leaderboard.md").exists() and (out / "tiny" / "hang" / "metrics.json").exists()


def test_checksum_memo_follows_size_and_mtime(setup):
    tmp_path, tiny, run = setup
    path = write_config(tmp_path, two_retrievers(tiny, run))
    run_bench(load_config(path))
    memo = json.loads((tmp_path / "results" / "t" / ".checksums.json").read_text())
    qrels = tiny / "qrels" / "test.tsv"
    import hashlib

    assert memo[str(qrels.resolve())]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    # Same size, new content (grade 2 -> 3), new mtime: re-hashed, so both cells rerun.
    text = qrels.read_text()
    qrels.write_text(text.replace("q1\td2\t2", "q1\td2\t3"))
    assert len(qrels.read_text()) == len(text)
    os.utime(qrels, ns=(time.time_ns(), mtime(qrels) + 10**9))
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["run", "run"]
    assert [o.status for o in run_bench(load_config(path)).outcomes] == ["reused", "reused"]


def test_a_dataset_that_fails_to_load_fails_each_of_its_cells_with_its_own_error(setup):
    # The tiny dataset has no "train" qrels: every cell names that. Before, the first cell did and the
    # others failed with "'NoneType' object has no attribute 'files'" (the failed load was remembered).
    tmp_path, tiny, run = setup
    body = (f'datasets = [{{path = "{tiny}", label = "tiny", split = "train"}}]\n'
            '[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "a"\n'
            '[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\nlabel = "b"\nparams = {min_df = 2}\n')
    result = run_bench(load_config(write_config(tmp_path, body)))
    errors = {o.cell.name: (o.status, o.error) for o in result.outcomes}
    assert set(errors) == {"tiny / a", "tiny / b"}
    for status, error in errors.values():
        assert status == "failed" and "no qrels for split 'train'" in error, error


def test_a_dataset_folder_that_does_not_exist_is_refused_before_anything_runs(setup, monkeypatch):
    """Its cells failed after the other datasets' had run, as an 'unknown dataset'; now the config is
    refused naming the entry and the directory a relative path is taken from. Registered names with a
    slash (a CQADupStack forum) are not folders and pass."""
    tmp_path, tiny, _ = setup
    monkeypatch.chdir(tmp_path)
    body = (f'datasets = [{{path = "{tiny}"}}, "../nowhere/nfcorpus", "cqadupstack/android"]\n'
            '[[retrievers]]\ntype = "bm25"\n')
    with pytest.raises(ConfigError) as info:
        run_bench(load_config(write_config(tmp_path, body)), dry_run=True)
    assert str(info.value).endswith('datasets[1]: no such folder "../nowhere/nfcorpus" (a relative path is taken '
                                    f'from the directory the command runs in, {tmp_path})')
    check_dataset_folders(load_config(write_config(tmp_path, body.replace('"../nowhere/nfcorpus", ', ""))))
