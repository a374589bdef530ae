"""An output folder the process cannot write in is refused before any work (harness/cli/options.py,
check_output_folder with ``writable``).

``harness run -o /mnt/ro`` (a read-only bind mount; or a folder of another user) indexed, searched and
evaluated the whole dataset, then failed on its first write (``error: /mnt/ro/scifact: Read-only file
system``): the work was lost, an hour of encoding for a dense model on a large corpus. As an output
folder under a file is (``a.trec is not a folder``), it is now refused first: one line naming the
folder, exit 2, nothing indexed. ``bench --dry-run`` writes nothing and still plans such a folder."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.test_cli_review2 import files, harness  # noqa: F401  (the fixture and the in-process runner)


def _unwritable(folder: Path, monkeypatch) -> None:
    """``folder`` mode 0555, and reported unwritable by os.access also to root (which the mode does not stop)."""
    folder.mkdir()
    folder.chmod(0o555)
    real = os.access

    def access(path, mode, *args, **kwargs):
        if Path(path).resolve() == folder.resolve() and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_an_unwritable_output_folder_is_refused_before_any_work(files, monkeypatch, capsys):  # noqa: F811
    locked = files / "locked"
    _unwritable(locked, monkeypatch)
    try:
        code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "locked/results")
        assert (code, out, err) == (2, "", "error: --output-dir locked/results: cannot write in locked "
                                           "(permission denied)\n")
        assert not (files / "cache" / "bm25").exists()  # nothing was indexed
        (files / "b.toml").write_text('name = "x"\nk = [1]\nmetrics = ["P@1"]\n[[datasets]]\npath = "ds"\n'
                                      '[[retrievers]]\ntype = "bm25"\n')
        code, out, err = harness(monkeypatch, capsys, "bench", "b.toml", "-o", "locked")
        assert (code, out, err) == (2, "", "error: --output-dir locked/x: cannot write in locked (permission denied)\n")
        code, out, err = harness(monkeypatch, capsys, "bench", "b.toml", "-o", "locked", "--dry-run", "-q")
        assert code == 0, err
        assert not (files / "cache" / "bm25").exists()
    finally:
        locked.chmod(0o755)


def test_a_writable_output_folder_still_runs(files, monkeypatch, capsys):  # noqa: F811
    code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "results", "-q")
    assert (code, out) == (0, "results written to results/ds/bm25\n"), err
