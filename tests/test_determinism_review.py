"""Reproducibility review: what a result records must not depend on the environment it was made in
beyond the facts it names (see each test for the source of its expected value)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from harness.fingerprint import git_commit

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo(folder, name: str) -> str:
    """A git repository at ``folder`` with one commit holding ``name``; returns its HEAD."""
    folder.mkdir()
    (folder / name).write_text("x\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for command in (["init", "-q", "."], ["add", name], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", *command], cwd=folder, check=True, capture_output=True,
                       env={**env, "PATH": os.environ["PATH"], "HOME": str(folder)})
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, check=True, capture_output=True,
                          text=True).stdout.strip()


@needs_git
def test_git_commit_is_the_folders_repository_whatever_git_dir_says(tmp_path, monkeypatch):
    # Expected: the HEAD `git rev-parse HEAD` gives in the folder with a clean environment (the
    # fingerprint's documented fact: the commit of the working tree holding the harness source).
    # Before: a $GIT_DIR inherited from a git hook of another project gave that project's commit.
    own = _repo(tmp_path / "own", "a.py")
    other = _repo(tmp_path / "other", "b.py")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert git_commit(tmp_path / "own") == {"commit": own, "dirty": False}
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "other" / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "other"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other" / ".git" / "index"))
    assert own != other
    assert git_commit(tmp_path / "own") == {"commit": own, "dirty": False}


@needs_git
def test_git_commit_of_an_untracked_folder_stays_none_under_another_git_dir(tmp_path, monkeypatch):
    # Expected None (documented: "None outside git"); before, the other repository's commit, marked dirty.
    _repo(tmp_path / "other", "b.py")
    outside = tmp_path / "site-packages" / "harness"
    outside.mkdir(parents=True)
    (outside / "fingerprint.py").write_text("x\n")
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "other" / ".git"))
    assert git_commit(outside) is None


def _sets_with_nan_in_two_places() -> tuple[set, set]:
    """Two equal-looking sets of floats whose NaN (a new object each time) iterates at different places:
    a NaN's hash is its address (Python >= 3.10), so where it lands among the other items varies."""
    first, kept = None, []  # (kept alive: a freed NaN's address, hence its place, would be reused)
    for _ in range(10_000):
        candidate = {float("nan"), 1.0, 2.0, 3.0, 5.0, 9.0, 17.0}
        kept.append(candidate)
        if first is None:
            first = candidate
        elif [v == v for v in candidate] != [v == v for v in first]:
            return first, candidate
    pytest.skip("every NaN landed in the same place of its set")


def test_a_set_holding_nan_is_written_in_one_order():
    # Expected: one list for both sets (the documented promise of plain_json: a set's items sorted, so
    # its list does not depend on the set's iteration order). Before: sorted() kept the NaN where the set
    # had it ([1.0, 2.0, 3.0, nan, 5.0, ...] and [1.0, 2.0, ..., 17.0, nan]).
    from harness.reports.document import plain_json

    first, second = _sets_with_nan_in_two_places()
    a, b = plain_json(first, finite=False), plain_json(second, finite=False)
    assert repr(a) == repr(b)
    assert plain_json(first) == plain_json(second)  # (finite: NaN as None)
    assert plain_json({frozenset({(v, 0) for v in first})}, finite=False).__repr__() == \
        plain_json({frozenset({(v, 0) for v in second})}, finite=False).__repr__()


def test_a_bench_cell_fingerprint_does_not_follow_a_nan_in_a_set():
    # A plugin's params() holding such a set: the cell's fingerprint must be one value (else the finished
    # cell is never recognised and runs again on every `harness bench`).
    from harness.bench.cells import fingerprint
    from harness.bench.config import RetrieverSpec

    first, second = _sets_with_nan_in_two_places()
    spec = RetrieverSpec(type="x:Y", label="y", params={})
    prints = {fingerprint({"corpus.jsonl": "0" * 64}, "test", spec, {"grid": grid}, {"k": [10]})
              for grid in (first, second)}
    assert len(prints) == 1
