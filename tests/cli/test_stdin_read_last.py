"""Standard input is read after the other inputs are looked at (harness/cli/options.py
``refuse_missing_beside_stdin``): ``harness evaluate --qrels - --run missing.trec`` (and ``fuse --run -
--run missing.trec``, ``compare --qrels missing.txt -``) read standard input first, waiting for good
on a terminal or a pipe left open, and named the missing file only once it was closed. Now the
missing file is named at once, in the reader's words (the oracle: the message the same command gives
without ``-``)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _with_stdin_left_open(*args) -> tuple[int, str]:
    """(exit code, stderr) of ``harness ARGS`` whose standard input is a pipe nobody writes to or closes."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=60)  # (a reader of standard input waits here for good)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.returncode, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\n")
    return tmp_path


def test_evaluate_names_a_missing_run_before_reading_stdin(files):
    missing = files / "missing.trec"
    assert _with_stdin_left_open("evaluate", "--qrels", "-", "--run", missing) == (
        2, f"error: {missing}: cannot read run file: No such file or directory\n")


def test_fuse_names_a_missing_run_before_reading_stdin(files):
    missing = files / "missing.trec"
    assert _with_stdin_left_open("fuse", "--run", "-", "--run", missing, "-o", files / "f.trec") == (
        2, f"error: {missing}: cannot read run file: No such file or directory\n")
    assert not (files / "f.trec").exists()


def test_compare_names_missing_qrels_before_reading_stdin(files):
    missing = files / "missing.txt"
    assert _with_stdin_left_open("compare", "--qrels", missing, "-", files / "a.trec") == (
        2, f"error: {missing}: cannot read qrels file: No such file or directory\n")
    without_stdin = subprocess.run([sys.executable, "-m", "harness", "compare", "--qrels", str(missing),
                                    str(files / "a.trec"), str(files / "a.trec")], capture_output=True, text=True,
                                   timeout=120)
    assert without_stdin.stderr == f"error: {missing}: cannot read qrels file: No such file or directory\n"
