"""``harness compare`` and standard input (harness/cli/compare.py, harness/compare/load.py).

* ``-`` among the results is a TREC run read from standard input, evaluated on ``--qrels`` as a run file
  is (named ``stdin``, or NAME=-; ``<stdin>`` in errors), as ``harness evaluate --run -`` reads it; before:
  ``error: -: no such file or folder``.
* ``--qrels -`` given with result folders only (which need no qrels) is refused before standard input is
  read; before, the command read standard input first (waiting on a terminal or an open pipe) and
  refused after. ``-`` twice (``--qrels -`` and a run ``-``) is refused before anything is read.

Expected values, a worked example: q1 judges d1, q2 judges d2 (grade 1); run a ranks the judged document
first for both queries (P@1 = 1), run b second (P@1 = 0): means 1.0 and 0.0, a difference of -1 on
each query; the same numbers as the run given as a file (the oracle of the path that worked)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

QRELS = b"q1 0 d1 1\nq2 0 d2 1\n"
A = b"q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d2 1 2.0 a\nq2 Q0 d1 2 1.0 a\n"
B = b"q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d1 1 2.0 b\nq2 Q0 d2 2 1.0 b\n"


def harness(*args, stdin: bytes = b""):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], input=stdin, capture_output=True,
                          timeout=120)


@pytest.fixture
def files(tmp_path):
    for name, data in (("q.txt", QRELS), ("a.trec", A), ("b.trec", B)):
        (tmp_path / name).write_bytes(data)
    return tmp_path


def _systems(proc) -> list:
    assert proc.returncode == 0, proc.stderr
    return [(s["name"], s["source"], s["means"]) for s in json.loads(proc.stdout)["systems"]]


def test_a_run_from_stdin_is_compared(files):
    from_stdin = harness("compare", "--qrels", files / "q.txt", files / "a.trec", "-", "-m", "P@1", "--json", "-",
                         stdin=B)
    assert _systems(from_stdin) == [("a", str(files / "a.trec"), {"P@1": 1.0}), ("stdin", "<stdin>", {"P@1": 0.0})]
    from_file = harness("compare", "--qrels", files / "q.txt", files / "a.trec", files / "b.trec", "-m", "P@1",
                        "--json", "-")
    assert [means for _, _, means in _systems(from_file)] == [{"P@1": 1.0}, {"P@1": 0.0}]
    named = harness("compare", "--qrels", files / "q.txt", files / "a.trec", "new=-", "-m", "P@1", "--json", "-",
                    stdin=B)
    assert _systems(named)[1] == ("new", "<stdin>", {"P@1": 0.0})


def test_errors_name_stdin(files):
    proc = harness("compare", "--qrels", files / "q.txt", files / "a.trec", "-", stdin=B + b"q2 Q0 d3 3 x b\n")
    assert (proc.returncode, proc.stderr.decode()) == (2, "error: <stdin>:5: score 'x' is not a number (id 'd3')\n")
    proc = harness("compare", files / "a.trec", "-", stdin=B)
    assert proc.stderr.decode() == "error: a.trec: a run file needs qrels to be evaluated (--qrels FILE)\n".replace(
        "a.trec", str(files / "a.trec"))
    proc = harness("compare", "--qrels", "-", files / "a.trec", "-", stdin=QRELS)
    assert (proc.returncode, proc.stderr.decode()) == (
        2, "error: --qrels - and RESULTS -: standard input can be read once; give the other as a file "
           "(or <(command))\n")


def test_qrels_from_stdin_for_result_folders_only_is_refused_without_reading_it(files):
    for name, run in (("a", files / "a.trec"), ("b", files / "b.trec")):
        proc = harness("evaluate", "--qrels", files / "q.txt", "--run", run, "--json", files / name / "metrics.json")
        assert proc.returncode == 0, proc.stderr
    # standard input is a pipe nobody writes to or closes: a reader of it waits for good
    proc = subprocess.Popen([sys.executable, "-m", "harness", "compare", "--qrels", "-", files / "a", files / "b"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=60)  # (communicate() would close standard input)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert (proc.returncode, out, err.decode()) == (2, b"", "error: --qrels applies to run files only; every "
                                                    "result given is evaluated already (a result folder or "
                                                    "metrics.json)\n")
    # with qrels from stdin, a run file is evaluated on them
    proc = harness("compare", "--qrels", "-", files / "a", files / "b.trec", "-m", "P@1", "--json", "-",
                   stdin=QRELS)
    assert [means for _, _, means in _systems(proc)] == [{"P@1": 1.0}, {"P@1": 0.0}]


def test_check_takes_no_run_from_stdin(files):
    """``harness check`` gates metrics files only: ``-`` (a run, for compare) is refused as any run file is
    (a guard of load_system's ``-``, which would otherwise ask check for --qrels it does not take)."""
    proc = harness("evaluate", "--qrels", files / "q.txt", "--run", files / "a.trec", "--json", files / "a.json")
    assert proc.returncode == 0, proc.stderr
    proc = harness("check", "--baseline", "-", "--current", files / "a.json", stdin=A)
    assert (proc.returncode, proc.stderr.decode()) == (
        2, "error: --baseline takes a metrics.json or a result folder, got -\n")
