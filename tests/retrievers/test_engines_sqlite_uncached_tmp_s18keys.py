"""``harness run -r sqlite`` with ``cache=false`` builds its database in a temporary folder; a run killed
by SIGKILL cannot remove it (a whole database each). The folder is now named as the caches' temporary
folders are (``.harness-sqlite.<pid>-<host>.<random>.tmp``), and the next uncached build removes the
abandoned ones (writer's process gone), keeping a running process's. Worked example: one dead writer's
folder (a child process that has exited), one live writer's (this process), one unrelated folder."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from harness.atomic import writer_tag
from harness.datasets.corpus import Corpus
from retrievers import create


def test_uncached_build_removes_killed_runs_database(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # (its pid is gone: a writer killed by SIGKILL)
    host = writer_tag().split("-", 1)[1]
    dead = tmp_path / f".harness-sqlite.{child.pid}-{host}.abcd1234.tmp"
    live = tmp_path / f".harness-sqlite.{writer_tag()}.efgh5678.tmp"
    other = tmp_path / "someone-elses"
    for folder in (dead, live, other):
        folder.mkdir()
        (folder / "index.sqlite3").write_bytes(b"x" * 1000)

    retriever = create("sqlite", cache=False)
    retriever.index(Corpus(["d1", "d2"], ["", ""], ["apple pie", "banana split"]))

    assert not dead.exists()  # the killed run's database is removed
    assert live.is_dir() and other.is_dir()  # a running writer's and an unrelated folder are kept
    index_path = Path(retriever.stats()["index_path"])
    assert index_path.parent.parent == tmp_path
    assert index_path.parent.name.startswith(f".harness-sqlite.{writer_tag()}.")
    assert index_path.parent.name.endswith(".tmp")
