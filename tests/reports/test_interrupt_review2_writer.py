"""A result folder rewritten by a ``harness run`` that is killed midway must not keep the earlier
result's metrics.json beside the new run.trec (harness/reports/writer.py, write_result_folder).

Worked example on the tiny dataset (tests/bench/bench_helpers): run file A ranks d4 first for q2
(P@1 = 0.5), run file B ranks d1 (P@1 = 0). ``harness run`` with A writes results/tiny/mine/; the
same command with B is killed (SIGKILL) just before metrics.json: run.trec and per_query.jsonl are
B's. The folder kept A's metrics.json (P@1 0.5, A's sha256), whose presence says the files beside
it are its own: ``harness compare`` takes the run.trec beside it as the evaluated run. Expected:
no metrics.json (the folder reads as unfinished), or B's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.bench.bench_helpers import write_tiny

KILLED_AT_METRICS_JSON = textwrap.dedent("""
    import os, signal, sys
    import harness.reports.writer as writer
    real = writer.write_json
    def write_json(path, obj):
        if str(path).endswith("metrics.json"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, obj)
    writer.write_json = write_json
    from harness.cli import main
    sys.argv = ["harness", *sys.argv[1:]]
    main()
""")


def harness_run(tmp_path, run_file, killed: bool) -> subprocess.CompletedProcess:
    args = ["run", "-d", str(tmp_path / "tiny"), "-r", "run-file", "-p", f"path={run_file}", "--k", "1",
            "--name", "mine", "-o", str(tmp_path / "results"), "--quiet"]
    command = [sys.executable, "-c", KILLED_AT_METRICS_JSON, *args] if killed else [sys.executable, "-m", "harness", *args]
    return subprocess.run(command, capture_output=True, text=True)


def test_a_killed_rewrite_leaves_no_earlier_metrics_json_beside_its_run(tmp_path):
    write_tiny(tmp_path / "tiny")
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q2 Q0 d4 1 1.0 s\n")
    b.write_text("q2 Q0 d1 1 1.0 s\n")
    proc = harness_run(tmp_path, a, killed=False)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "results" / "tiny" / "mine"
    assert json.loads((folder / "metrics.json").read_text())["metrics"]["P@1"] == 0.5
    assert harness_run(tmp_path, b, killed=True).returncode == -9
    assert "q2 Q0 d1 1" in (folder / "run.trec").read_text()  # B's run was written
    assert not (folder / "metrics.json").exists()  # (was A's: P@1 0.5 beside B's run)


KILLED_AFTER_RUN_TREC = textwrap.dedent("""
    import os, signal, sys
    import harness.reports.writer as writer
    real = writer.write_run
    def write_run(*args, **kwargs):
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    writer.write_run = write_run
    from harness.cli import main
    sys.argv = ["harness", *sys.argv[1:]]
    main()
""")


def test_a_rewrite_killed_after_its_run_leaves_none_of_the_earlier_files(tmp_path):
    """Killed once the new run.trec is in place (SIGINT there was the same): the folder held B's run.trec beside
    A's metrics.md (P@1 0.5000) and A's per_query.jsonl, files of two runs, where a reader saw A's numbers
    beside B's run. Expected: none of A's files; B's run.trec alone (the folder reads as unfinished)."""
    write_tiny(tmp_path / "tiny")
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q2 Q0 d4 1 1.0 s\n")
    b.write_text("q2 Q0 d1 1 1.0 s\n")
    assert harness_run(tmp_path, a, killed=False).returncode == 0
    folder = tmp_path / "results" / "tiny" / "mine"
    assert "| P | 0.5000 |" in (folder / "metrics.md").read_text()  # (A's: P@1)
    command = [sys.executable, "-c", KILLED_AFTER_RUN_TREC, "run", "-d", str(tmp_path / "tiny"), "-r", "run-file",
               "-p", f"path={b}", "--k", "1", "--name", "mine", "-o", str(tmp_path / "results"), "--quiet"]
    assert subprocess.run(command, capture_output=True, text=True).returncode == -9
    assert "q2 Q0 d1 1" in (folder / "run.trec").read_text()  # B's run was written
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["run.trec"]
