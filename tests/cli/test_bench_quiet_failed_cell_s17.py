"""``harness bench --quiet`` says why a cell failed.

docs/bench.md: "A cell that fails (a bad dataset file, a retriever that raises) is reported with its error
and the other cells still run; the exit code is then 1." With ``--quiet`` (no per-cell lines) the failed
cell's error was written to leaderboard.md only: a CI log showed ``1 failed`` and exit 1, and no line
naming the file and line at fault. Now each failed cell gets one line on stderr (the per-cell line
without its counter); stdout keeps the summary alone.
"""

from __future__ import annotations

import os

from tests.bench.bench_helpers import write_tiny


def test_quiet_bench_names_the_failed_cells_error_on_stderr(tmp_path, harness_cli, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    tiny = write_tiny(tmp_path / "tiny")
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 x t\n")  # score 'x': refused by the run reader, naming line 1 and the document
    config = tmp_path / "b.toml"
    config.write_text(f'name = "q"\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "bad"\nparams = {{path = "{bad}"}}\n')
    out = harness_cli("bench", config, "--quiet")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [f"tiny / bad: failed: {bad}:1: score 'x' is not a number (id 'd1')"]
    assert out.stdout.splitlines() == [  # the summary alone, as before
        f"bench q: 1 cells (0 run, 0 reused, 1 failed) in {out.stdout.split(' in ')[1].split(' s;')[0]} s; "
        f"leaderboard: {os.path.join(tmp_path, 'results', 'q', 'leaderboard.md')}"]
