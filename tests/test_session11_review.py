"""Regression review of the day's commits (session 11): each case with its expected value and source.

* ``read_run_file`` (compare's run-file input) took the sha256 of ``--qrels`` after parsing it: qrels read
  from a pipe (``--qrels <(zcat qrels.gz)``, the pipe the readers take once, ``read_once``) were hashed as
  the empty rest of the pipe, so compare warned that the run was "evaluated on qrels that are not among
  the dataset files" of a result made from those very qrels (and a named pipe made it wait for good).
* ``consistency_warnings`` read a metrics file's ``dataset.files`` as a ``{file: sha256}`` table without a
  look: a hand-edited or foreign file with a list there failed ``harness compare RESULT RUN --qrels Q`` with
  a bare AttributeError once the run file's qrels were compared with it (the same for two such files).
* ``percent`` (the confidence printed by check's latency gate and compare's details table) kept 6 digits
  (``:g``): ``--alpha 1e-7`` drew a 99.99999% interval that was printed as "100%", the misprint its commit
  fixed for 99.5%.
"""

from __future__ import annotations

import json
import os
import threading

import pytest

from harness.checksums import sha256
from harness.compare.load import consistency_warnings, load_system
from harness.compare.significance import percent
from harness.evaluation import Evaluator
from harness.formats.trec import read_qrels, read_run
from harness.reports import MetricsDocument
from tests.compare.helpers import write_evaluated_result

QRELS = "q1 0 a 2\nq2 0 b 1\nq3 0 c 2\n"
RUN = "q1 Q0 a 1 2.0 r\nq2 Q0 b 1 2.0 r\nq3 Q0 x 1 2.0 r\n"


def test_a_run_file_scored_on_qrels_from_a_pipe_is_not_warned_about_as_other_qrels(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    base = load_system(str(write_evaluated_result(tmp_path / "res", run, qrels)))

    read_end, write_end = os.pipe()  # the same qrels through a pipe, as the shell's <(cat qrels.txt) gives them
    writer = threading.Thread(target=lambda: (os.write(write_end, QRELS.encode()), os.close(write_end)))
    writer.start()
    try:
        piped = load_system(str(run), qrels=f"/dev/fd/{read_end}", metrics=["P@1"])
    finally:
        writer.join()
        os.close(read_end)
    assert piped.qrels_sha256 == sha256(qrels)  # (was the sha256 of no bytes, e3b0c442...)
    assert consistency_warnings([base, piped]) == []
    # the same values as from the file (P@1: q1 1, q2 1, q3 0)
    assert piped.values["P@1"].tolist() == [1.0, 1.0, 0.0]


def test_the_printed_confidence_keeps_the_digits_of_the_level_used():
    # 1 - alpha as a percentage, to 10 decimals (docs/compare.md: the interval is the 1 - alpha one)
    assert percent(1 - 1e-7) == "99.99999%"  # (was "100%")
    assert percent(1 - 5e-7) == "99.99995%"  # (was "99.9999%")
    assert percent(0.995) == "99.5%" and percent(0.95) == "95%" and percent(0.5) == "50%"


def test_a_metrics_file_whose_dataset_files_are_no_table_is_compared_without_a_traceback(tmp_path):
    # (README: a user's mistake in an input file is one clear line, never a traceback; here there is
    # nothing to compare the qrels with, so no warning, as for a metrics file that records no files)
    from harness.compare.load import align

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    result = Evaluator(["P@1"]).evaluate(read_run(run), read_qrels(qrels))
    for name, files in (("list", [sha256(qrels)]), ("nested", {"qrels": {"sha256": sha256(qrels)}})):
        document = MetricsDocument.build(result, dataset={"name": "q", "split": "test", "files": files},
                                         retriever={"name": "x", "params": {}}, k_values=[1], depth=None, timings={})
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.json").write_text(json.dumps(document.to_json()))
        base = load_system(str(tmp_path / name))
        other = load_system(str(run), qrels=qrels, metrics=["P@1"])
        assert consistency_warnings([base, other]) == []  # (was AttributeError / TypeError: unhashable)
        assert align([base, other], ["P@1"]).warnings == []


def test_compare_reads_a_piped_qrels_once_for_every_run_file(tmp_path):
    """harness compare a.trec b.trec --qrels <(cat q): the second run file read the emptied pipe and failed
    with 'no judgments in qrels file'; the pipe is read once for both (P@1: a 1.0, b 0.5 by hand)."""
    import shutil
    import subprocess
    import sys

    if shutil.which("bash") is None:
        pytest.skip("needs bash for process substitution")
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 a 1 2.0 r\nq2 Q0 b 1 2.0 r\n")
    (tmp_path / "b.trec").write_text("q1 Q0 a 1 2.0 r\nq2 Q0 x 1 2.0 r\n")
    command = (f'"{sys.executable}" -c "from harness.cli import main; main()" compare a.trec b.trec '
               '--qrels <(cat q.txt) --metric P@1 --json -')
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    means = {s["name"]: s["means"]["P@1"] for s in json.loads(done.stdout)["systems"]}
    assert means == {"a": 1.0, "b": 0.5}
