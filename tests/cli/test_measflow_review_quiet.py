"""``harness run -q`` prints only ``results written to FOLDER`` (its help: "No progress bars, warnings or
table"), also when a cache cannot be written (harness/cli/run.py, harness/cli/display.py).

With ``HARNESS_CACHE_DIR`` on a read-only bind mount, ``harness run -d scifact -q`` printed
``could not write the BM25 index cache under ...: [Errno 30] Read-only file system: ...`` on stderr
(a logged warning, which ``-q`` did not reach). Now ``-q`` hides what the library logs at WARNING
while the command runs; metrics.json still records it (``retriever_stats.cache``: ``built, not
cached (...)``), and without ``-q`` the warning is printed as before. A cache root under a file fails
the same write (ENOTDIR) without a mount."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest


@pytest.fixture
def unwritable_cache(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "d{i}", "title": "", "text": "word{i} shared"}}\n' for i in range(4)))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "word1"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "a-file").write_text("")
    return tmp_path, {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "a-file" / "cache"), "HARNESS_PROGRESS": "0"}


def _run(folder, env, *extra):
    return subprocess.run([sys.executable, "-m", "harness", "run", "-d", "ds", "--k", "1", "-o", "out", *extra],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_quiet_prints_no_cache_warning(unwritable_cache):
    folder, env = unwritable_cache
    proc = _run(folder, env, "-q")
    written = f"results written to {os.path.join('out', 'ds', 'bm25')}\n"
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, written, "")
    stats = json.loads((folder / "out" / "ds" / "bm25" / "metrics.json").read_text())["retriever_stats"]
    assert stats["cache"] == "built, not cached (Not a directory)"  # recorded where -q does not hide it


def test_without_quiet_the_cache_warning_is_printed(unwritable_cache):
    folder, env = unwritable_cache
    proc = _run(folder, env)
    assert proc.returncode == 0
    assert "could not write the BM25 index cache under" in proc.stderr


def test_quiet_in_process_puts_the_logging_threshold_back(harness_cli, tmp_path, monkeypatch, caplog):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "x"}\n')
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "a-file").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    with caplog.at_level(logging.WARNING):
        result = harness_cli("run", "-d", "ds", "--k", "1", "-o", "out", "-q")
    assert result.returncode == 0
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []  # hidden while it ran ...
    assert logging.root.manager.disable == logging.NOTSET  # ... and logging as it was afterwards
