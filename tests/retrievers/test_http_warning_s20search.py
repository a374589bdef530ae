"""The http retriever's failed-queries warning (``on_failure=empty``) is a Python warning, not a line a library
prints: called from Python, search() printed ``warning: http retriever: 2 of 4 queries failed ...`` on
stderr itself (progress.echo), which a caller could neither catch, filter nor silence. Expected: a
``harness.errors.HarnessWarning`` with that text (filterable as any warning; the failures are in
stats() as before), nothing printed; the CLI prints the same ``warning: ...`` line as before, ``-q`` too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

from harness.datasets import load_dataset
from harness.datasets.corpus import Queries
from harness.errors import HarnessWarning
from retrievers.http import HTTPRetriever
from tests.retrievers.http_fakes import FakeEngine, harness_hits

MESSAGE = ("http retriever: 2 of 4 queries failed and have empty rankings (on_failure=empty; causes in "
           "metrics.json retriever_stats.failures): q2, q3")


def answer(request, n):
    return (500, {}) if request.query["id"] in ("q2", "q3") else (200, harness_hits(request))


def test_a_library_search_warns_through_warnings_and_prints_nothing(capfd):
    queries = Queries(["q1", "q2", "q3", "q4"], ["a", "b", "c", "d"])
    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url, preset="harness", on_failure="empty", retries=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run = system.search(queries, 2)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert [(w.category, str(w.message)) for w in caught] == [(HarnessWarning, MESSAGE)]
    assert caught[0].filename == __file__  # it points at the line that called search()
    assert run.n_queries == 4 and system.stats()["failed_queries"] == ["q2", "q3"]


def test_an_error_filter_makes_it_an_exception():
    with FakeEngine(answer) as engine:
        system = HTTPRetriever(url=engine.url, preset="harness", on_failure="empty", retries=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", HarnessWarning)
            try:
                system.search(Queries(["q1", "q2", "q3", "q4"], ["a", "b", "c", "d"]), 2)
            except HarnessWarning as exc:
                assert str(exc) == MESSAGE
            else:
                raise AssertionError("no HarnessWarning")


def test_the_cli_still_prints_the_line_under_quiet(tmp_path):
    ids = load_dataset("scifact", "test").queries.ids
    failing = sorted({ids[0], ids[1]})
    with FakeEngine(lambda r, n: (500, {}) if r.query["id"] in failing else (200, harness_hits(r))) as engine:
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "--dataset", "scifact", "--retriever", "http",
                               "--param", f"url={engine.url}", "--param", "preset=harness", "--param",
                               "on_failure=empty", "--param", "retries=0", "--k", "10", "-q", "-o", str(tmp_path)],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "HARNESS_PROGRESS": "0"})
    assert proc.returncode == 0, proc.stderr
    line = (f"warning: http retriever: 2 of 300 queries failed and have empty rankings (on_failure=empty; causes in "
            f"metrics.json retriever_stats.failures): {', '.join(failing)}")
    assert line in proc.stderr.splitlines() and "HarnessWarning" not in proc.stderr, proc.stderr
    doc = json.loads((tmp_path / "scifact" / "http" / "metrics.json").read_text())
    assert doc["retriever_stats"]["failed_queries"] == failing
