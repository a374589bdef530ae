"""``harness evaluate --markdown`` of several runs: each run's label is a table cell that GitHub shows
literally. ``<stdin>`` (a run read from standard input) was written as it is, an HTML tag to GitHub, which
hid it (the row showed no run); a ``|`` in a run file's name split the row into one cell too many."""

from __future__ import annotations

import subprocess
import sys


def test_run_labels_are_written_literally(tmp_path):
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    run = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
    (tmp_path / "x|y.trec").write_text(run)
    out = tmp_path / "t.md"
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--qrels", str(tmp_path / "qrels.tsv"),
                           "--run", "-", "--run", str(tmp_path / "x|y.trec"), "--k", "1", "--markdown", str(out)],
                          input=run, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = out.read_text().splitlines()[2:]
    # P@1 = 1 and NDCG@1 = 1 for both (d1, the one relevant document, at rank 1): a worked example
    assert rows[0].startswith("| &lt;stdin> | 1.0000 |")
    assert rows[1].startswith("| x\\|y.trec | 1.0000 |")
    assert all(row.count(" | ") == rows[0].count(" | ") for row in rows)
