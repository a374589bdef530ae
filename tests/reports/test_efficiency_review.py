"""Review of the efficiency figures: a retriever's own latencies as numpy numbers, the run.trec
header's round trip for values holding Unicode line breaks, lone surrogates and empty dicts, and the
fingerprint's git commit of a harness that git does not track."""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest

from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.fingerprint import git_commit
from harness.formats.trec import read_run, write_run
from harness.reports import efficiency
from harness.run import Run
from tests.reports.test_efficiency import TimedService, toy_dataset


class NumpyTimedService(TimedService):
    """Times its requests as numpy scalars (``dict(zip(ids, array))``), as a plugin may."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def search(self, queries, k):
        run = super().search(queries, k)
        self.latencies = dict(zip(queries.ids, np.arange(10, 10 + len(queries)).astype(self.dtype)))
        return run


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_a_retrievers_numpy_latencies_are_its_own(dtype):
    # Formerly np.float32 / np.int64 values (no float / int subclasses) were refused as "not a finite
    # number >= 0 ms" (the warning showed np.float32(10.0)), and the queries got their share of the call.
    exp = run_experiment(toy_dataset(8), NumpyTimedService(dtype), Evaluator(["P@1"], k_values=[1]), [1])
    assert exp.document.efficiency["latency_ms"]["basis"] == "per request"
    assert exp.document.query_latency_ms == {f"q{i}": 10.0 + i for i in range(8)}  # as measured, exactly
    assert exp.document.efficiency["latency_ms"]["p50"] == 13.5  # np.percentile(10..17, 50)
    assert not exp.document.warnings


@pytest.mark.parametrize("bad", [10**400, np.bool_(True), np.float32("nan"), np.int64(-1)],
                         ids=["int-past-a-double", "np.bool_", "np.float32-nan", "np.int64-negative"])
def test_unusable_numpy_or_huge_latencies_are_refused_with_a_reason(bad):
    latencies, why = efficiency.measured_latencies({"a": 1.0, "b": bad}, ["a", "b"])
    assert latencies is None and "query 'b'" in why and "not a finite number >= 0 ms" in why


HOSTILE = {
    "tag": "a\u2028b",  # LINE SEPARATOR, PARAGRAPH SEPARATOR, NEL: line ends for str.splitlines() and YAML
    "data": {"test_collection": "x\u2029y\x85z", "split": "te: st \"#\n"},
    "odd": "bad\udcff",  # a non-UTF-8 folder name's byte, as os.fsdecode gives it
    "stages_s": {"load": 0.25, "search": math.inf},
    "empty": {},
    "nested": {"inner": {}, "list": [1, "\u2028", None]},
}


def test_header_round_trips_through_splitlines_with_unicode_line_breaks():
    # Formerly U+2028 / U+2029 / U+0085 were written raw: read().splitlines() cut the line there (the
    # value became '"a' and the header ended); an empty dict came back as None.
    lines = efficiency.run_header(HOSTILE)
    assert all(len(line.splitlines()) == 1 for line in lines)
    assert efficiency.parse_header("\n".join(lines).splitlines()) == HOSTILE


def test_header_with_hostile_values_is_written_as_utf8_and_read_back(tmp_path):
    # Formerly a lone surrogate failed the write of run.trec (UnicodeEncodeError) after the whole run.
    run = Run.from_dict({"q1": {"d1": 1.5, "d2": 0.5}})
    path = tmp_path / "run.trec"
    write_run(run, path, header=efficiency.run_header(HOSTILE))
    assert efficiency.parse_header(path.open(encoding="utf-8")) == HOSTILE
    assert efficiency.parse_header(path.read_text(encoding="utf-8").splitlines()) == HOSTILE
    assert read_run(path).to_dict() == run.to_dict()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_commit_of_a_folder_git_does_not_track_is_none(tmp_path):
    # The harness installed in a virtual environment inside another project's working tree: formerly
    # the fingerprint recorded that project's commit (and its dirty state) as the harness's.
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q")
    (tmp_path / ".gitignore").write_text(".venv/\n")
    (tmp_path / "app.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "project")
    installed = tmp_path / ".venv" / "lib" / "site-packages" / "harness"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")
    assert git_commit(installed) is None
    (tmp_path / "untracked").mkdir()
    (tmp_path / "untracked" / "a.py").write_text("")  # neither ignored nor tracked
    assert git_commit(tmp_path / "untracked") is None
    head = git_commit(tmp_path)  # the project's own folder: its commit
    assert head is not None and len(head["commit"]) == 40 and head["dirty"] is False
