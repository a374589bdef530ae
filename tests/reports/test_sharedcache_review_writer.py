"""Two writers of one result folder at once (two ``harness run`` with the same ``-o`` and ``--name``, e.g.
two terminals or a CI matrix trying parameters) must leave one writer's files, never one's
metrics.json beside the other's run.trec (harness/reports/writer.py, write_result_folder).

Worked example on the tiny dataset (tests/bench/bench_helpers): run file A ranks d4 first for q2
(P@1 = 0.5), run file B ranks d1 first (P@1 = 0). Writer A is held right after its run.trec is
written while writer B writes the same folder. Before the fix B wrote all four files, then A went
on: metrics.json said P@1 0.5 (A's) beside run.trec ranking d1 (B's) -- seen with real processes:
``harness run -p k1=0.5`` and ``-p k1=2.0`` into one ``--name`` left k1=0.5's metrics.json beside
k1=2.0's run.trec. Expected: the folder's run.trec is the run its metrics.json describes."""

from __future__ import annotations

import json
import threading

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.reports import writer
from harness.reports.writer import write_result_folder
from retrievers.run_file import RunFileRetriever
from tests.bench.bench_helpers import set_when_waiting, write_tiny


def _experiment(tmp_path, name: str, line: str):
    path = tmp_path / f"{name}.trec"
    path.write_text(line)
    dataset = load_dataset(str(tmp_path / "tiny"))
    return run_experiment(dataset, RunFileRetriever(path=str(path)), Evaluator(["P@1"], k_values=[1]), [1])


def test_two_writers_of_one_folder_leave_one_writers_files(tmp_path, monkeypatch):
    write_tiny(tmp_path / "tiny")
    a = _experiment(tmp_path, "a", "q2 Q0 d4 1 1.0 s\n")
    b = _experiment(tmp_path, "b", "q2 Q0 d1 1 1.0 s\n")
    assert a.document.metrics["P@1"] == 0.5 and b.document.metrics["P@1"] == 0.0  # (worked by hand)
    folder = tmp_path / "results" / "tiny" / "mine"
    a_wrote_run, b_moved = threading.Event(), threading.Event()  # b_moved: B has finished, or waits for a lock
    real = writer.write_run

    def write_run(run, path, **kwargs):
        real(run, path, **kwargs)
        if threading.current_thread().name == "A":  # hold A between its run.trec and its metrics.json
            a_wrote_run.set()
            # (with the lock B waits for it and A goes on; without, B writes its four files first: no sleep decides)
            assert b_moved.wait(timeout=60), "B neither finished nor waited for the folder's lock"

    monkeypatch.setattr(writer, "write_run", write_run)
    set_when_waiting(monkeypatch, "B", b_moved)

    def write(exp, done=None):
        try:
            write_result_folder(folder, exp.document, None, exp.run, tag="rf")
        finally:
            if done is not None:
                done.set()

    first = threading.Thread(target=write, args=(a,), name="A")
    first.start()
    assert a_wrote_run.wait(timeout=30)
    second = threading.Thread(target=write, args=(b, b_moved), name="B")
    second.start()
    first.join(timeout=120)
    second.join(timeout=120)
    assert not first.is_alive() and not second.is_alive()
    metrics = json.loads((folder / "metrics.json").read_text())["metrics"]
    ranked_first = [line.split()[2] for line in (folder / "run.trec").read_text().splitlines()
                    if line.startswith("q2 ")][0]
    assert (ranked_first, metrics["P@1"]) in (("d4", 0.5), ("d1", 0.0))  # one writer's run and its numbers
    per_query = [json.loads(line) for line in (folder / "per_query.jsonl").read_text().splitlines()]
    assert {row["query_id"]: row["P@1"] for row in per_query}["q2"] == metrics["P@1"] * 2  # (q1 scores 0)
