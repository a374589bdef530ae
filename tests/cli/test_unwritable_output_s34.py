"""An output file that cannot be created is refused before any work, by every command that writes one.

``harness evaluate --json /proc/x/m.json`` read and evaluated every run, printed the table, and only then
failed on its write (``error: /proc/x: No such file or directory``). The nearest existing folder of each
output is now tried with a file created and removed at once, before the inputs are read: ``os.access``
does not tell it for root, which passes it on /proc and on a read-only mount.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 not-a-score tag\n")  # a parse error, had the run been read
    return qrels, run


@pytest.mark.parametrize("option", ["--json", "--markdown"])
def test_evaluate_refuses_an_output_under_proc_before_reading_the_run(harness_cli, tmp_path, option):
    qrels, run = _inputs(tmp_path)
    out = harness_cli("evaluate", "--qrels", qrels, "--run", run, option, "/proc/harness-test/m.out")
    assert out.returncode == 2
    assert out.stderr == "error: /proc/harness-test/m.out: cannot write in /proc: No such file or directory\n"
    assert out.stdout == ""


def test_fuse_refuses_an_unwritable_output_before_reading(harness_cli, tmp_path):
    _, run = _inputs(tmp_path)
    out = harness_cli("fuse", "--run", run, "--run", run, "-o", "/proc/harness-test/fused.trec")
    assert out.returncode == 2
    assert out.stderr.startswith("error: /proc/harness-test/fused.trec: cannot write in /proc: ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a folder without write permission")
def test_a_folder_without_write_permission(harness_cli, tmp_path):
    qrels, run = _inputs(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        out = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", locked / "new" / "m.json")
    finally:
        locked.chmod(0o755)
    assert out.returncode == 2
    assert out.stderr == f"error: {locked}/new/m.json: cannot write in {locked}: Permission denied\n"


def test_a_writable_output_is_written_and_nothing_else_is_left(harness_cli, tmp_path):
    qrels, _ = _inputs(tmp_path)
    run = tmp_path / "good.trec"
    run.write_text("q1 Q0 d1 1 2.5 tag\n")
    out = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--json", tmp_path / "out" / "m.json")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["m.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.trec", "out", "qrels.tsv", "run.trec"]
