"""``harness bench`` with one ``run-file`` entry replaying standard input (``path = "-"``, accepted by
harness/bench/config.py): a pipeline stage's component is made once to plan the cell's params and again
to run each dataset's cell, and each read standard input anew: the first found it at its end, every cell
failed with ``<stdin>: the run file is empty`` (retrievers/run_file.py now shares what the process read).
Under the Ray executor, each task read its Ray worker's own (empty) standard input: the same false
error; refused before anything is read (harness/bench/runner.py ``_refuse_stdin_on_ray``).

Expected values, a worked example: q1 judges d3 relevant and the run ranks d3 first: NDCG@3 = 1; q2
judges d2, ranked second after d1: NDCG@3 = (1/log2 3) / 1 = 0.6309298; mean (1 + 1/log2 3) / 2; the
same on the dataset's copy (the second dataset's cell)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

RUN = b"q1 Q0 d3 1 3.0 f\nq1 Q0 d1 2 2.0 f\nq2 Q0 d1 1 2.0 f\nq2 Q0 d2 2 1.0 f\n"
PIPELINE = ('[[pipelines]]\nlabel = "pl"\n[[pipelines.stages]]\ntype = "retrieve"\nname = "rf"\n'
            'retriever = "run-file"\nparams = { path = "-" }\n')


def _files(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "{d}", "title": "", "text": "t"}}\n' for d in ("d1", "d2", "d3")))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td2\t1\n")
    shutil.copytree(tmp_path / "ds", tmp_path / "ds2")


def _bench(tmp_path, config: str, *args):
    (tmp_path / "b.toml").write_text(config)
    return subprocess.run([sys.executable, "-m", "harness", "bench", "b.toml", *args], input=RUN,
                          capture_output=True, timeout=300, cwd=tmp_path)


def test_a_pipeline_stage_replaying_stdin_runs_on_every_dataset(tmp_path):
    _files(tmp_path)
    config = f'name = "b"\ndatasets = ["ds", "ds2"]\nk = [3]\nmetrics = ["NDCG@3"]\n{PIPELINE}'
    proc = _bench(tmp_path, config)
    assert proc.returncode == 0, proc.stderr
    for dataset in ("ds", "ds2"):
        folder = tmp_path / "results" / "b" / dataset / "pl"
        assert (folder / "metrics.json").is_file(), proc.stdout.decode() + proc.stderr.decode()
        ndcg = json.loads((folder / "metrics.json").read_text())["metrics"]["NDCG@3"]
        assert abs(ndcg - (1 + 1 / math.log2(3)) / 2) < 1e-12


def test_stdin_replay_under_ray_is_refused_before_anything_runs(tmp_path):
    _files(tmp_path)
    config = ('name = "b"\ndatasets = ["ds"]\nk = [3]\nmetrics = ["NDCG@3"]\n'
              '[[retrievers]]\ntype = "run-file"\nlabel = "rf"\nparams = { path = "-" }\n')
    proc = _bench(tmp_path, config, "--executor", "ray")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode() == ('error: b.toml: retrievers[0].params.path: "-" (standard input) is read by this '
                                    "process, not by the Ray executor's tasks; give the run as a file, or run the "
                                    "bench with --executor local\n")
    assert not (tmp_path / "results").exists()
