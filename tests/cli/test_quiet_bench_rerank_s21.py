"""``harness bench -q`` and ``harness rerank -q`` hide what ``harness run -q`` hides (harness/cli/display.py
``hide_output``, one place for the three commands).

``run -q`` printed no warning of another package and nothing the library logs as a warning (a cache it could
not write: tests/cli/test_quiet_dependency_output.py, test_measflow_review_quiet.py). ``bench -q`` hid only
the bars: a plugin whose dependency warns at import printed its ``FutureWarning`` and
``DeprecationWarning`` lines, and a cache root under a file printed ``could not write the BM25 index cache
under ...`` once per cell, and the bench's own ``warning: report.html not written: ...`` (printed, not logged),
among the summary's lines. ``rerank -q`` hid the dependency's warnings but not
what a reranker logs. Expected: stderr empty, stdout the summary (bench) or the one line (rerank).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.cli.test_quiet_dependency_output import write_folder  # (its dependency warns at import)

PLUGIN = textwrap.dedent('''
    import logging

    import numpy as np

    import fakedep  # noqa: F401
    from harness.reranker import Reranker
    from retrievers.bm25 import BM25Retriever


    class Plugged(BM25Retriever):
        name = "plugged"


    class Logging(Reranker):
        """Score = minus the document's corpus row; logs a warning, as a score cache not written does."""

        name = "logging"

        def score(self, candidates, queries, corpus):
            logging.getLogger("plugged").warning("could not write the score cache under /x: read-only")
            return -candidates.doc_rows.astype(np.float64)
''')


@pytest.fixture
def folder(tmp_path):
    write_folder(tmp_path, PLUGIN)
    (tmp_path / "a-file").write_text("")  # HARNESS_CACHE_DIR under it: every cache write fails (ENOTDIR)
    (tmp_path / "b.toml").write_text('name = "q"\noutput_dir = "out"\nk = [1]\nmetrics = ["NDCG@1"]\n'
                                     'datasets = [{path = "ds", label = "ds"}]\n'
                                     '[[retrievers]]\ntype = "plugged:Plugged"\nlabel = "p"\n')
    (tmp_path / "first.trec").write_text("q1 Q0 d1 1 2.0 f\nq1 Q0 d2 2 1.0 f\n")
    return tmp_path


def _harness(folder, *args):
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "HARNESS_CACHE_DIR": str(folder / "a-file" / "cache"), "PYTHONPATH": path,
           "HARNESS_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)


def test_bench_quiet_hides_a_dependency_warning_and_a_cache_not_written(folder):
    loud = _harness(folder, "bench", "b.toml", "--force")
    assert loud.returncode == 0, loud.stderr
    assert "FutureWarning: fakedep.old_api is deprecated" in loud.stderr  # (what -q hides)
    assert "\nwarning: could not write the BM25 index cache under" in "\n" + loud.stderr  # (a logged warning, prefixed)
    assert "warning: report.html not written: " in loud.stderr  # (one judged query: no paired test, no page)
    quiet = _harness(folder, "bench", "b.toml", "--force", "-q")
    assert (quiet.returncode, quiet.stderr) == (0, "")
    assert len(quiet.stdout.splitlines()) == 1 and quiet.stdout.startswith("bench q: 1 cells (1 run, 0 reused, 0 failed)")
    stats = json.loads((folder / "out" / "q" / "ds" / "p" / "metrics.json").read_text())["retriever_stats"]
    assert stats["cache"] == "built, not cached (Not a directory)"  # recorded where -q does not hide it


def test_rerank_quiet_hides_what_a_reranker_logs(folder):
    args = ("rerank", "-d", "ds", "--run", "first.trec", "-r", "plugged:Logging", "-o", "out.trec", "--depth", "2")
    loud = _harness(folder, *args)
    assert loud.returncode == 0, loud.stderr
    assert "could not write the score cache under /x: read-only" in loud.stderr
    quiet = _harness(folder, *args, "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "reranked run written to out.trec\n", "")
    assert (folder / "out.trec").read_text() == "q1 Q0 d1 1 -1.0 logging\nq1 Q0 d2 2 -2.0 logging\n"
