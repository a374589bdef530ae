"""Two processes adding to one embedding entry's devices.json or versions.json at once keep both
additions (retrievers/dense/cache.py records_lock). Each file is written atomically, but before the
lock each writer read the old record, merged its own value and renamed its file into place, so the
second rename dropped the first's value: a device kind or a library version of rows that are in the
entry. The second writer here is a thread with its own open lock file (flock locks are per open file,
so it waits as another process would), started between the first writer's read and its write."""

from __future__ import annotations

import threading

import numpy as np

import retrievers.dense.cache as cache
from retrievers.dense.cache import EmbeddingCache


def _entry(folder):
    return EmbeddingCache(folder, 0, np.arange(0), 2, {})


def _interleaved(monkeypatch, first, second) -> None:
    """Run ``first()``; when it is about to write its record, run ``second()`` on a thread and give it
    0.5 s to finish (without the lock it does, and its record is then overwritten) before writing."""
    real, others = cache.write_json, []

    def write_json(path, obj):
        if not others:
            others.append(threading.Thread(target=second))
            others[0].start()
            others[0].join(timeout=0.5)
        real(path, obj)

    monkeypatch.setattr(cache, "write_json", write_json)
    first()
    others[0].join()


def test_two_device_kinds_added_at_once_are_both_recorded(tmp_path, monkeypatch):
    folder = tmp_path / "documents-0123"
    folder.mkdir()
    _interleaved(monkeypatch, lambda: _entry(folder).add_device("cpu"), lambda: _entry(folder).add_device("cuda"))
    assert _entry(folder).devices() == ["cpu", "cuda"]  # before: ["cpu"] (the cuda writer's record overwritten)
    assert list((tmp_path / ".locks").glob("*.records.lock"))  # (the lock lies beside the build locks)
    assert sorted(p.name for p in folder.iterdir()) == ["devices.json"]


def test_two_library_versions_added_at_once_are_both_recorded(tmp_path, monkeypatch):
    folder = tmp_path / "documents-4567"
    folder.mkdir()
    _interleaved(monkeypatch, lambda: _entry(folder).add_versions({"torch": "2.13.0"}),
                 lambda: _entry(folder).add_versions({"torch": "2.12.1", "transformers": "4.57.0"}))
    assert _entry(folder).versions() == {"torch": ["2.12.1", "2.13.0"], "transformers": ["4.57.0"]}


def test_read_only_cache_still_reads_its_records(tmp_path, monkeypatch):
    """A cache the process cannot write (its lock file cannot be made) still records nothing new
    without an error from the lock: the record was already there."""
    folder = tmp_path / "documents-89ab"
    folder.mkdir()
    _entry(folder).add_device("cpu")

    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(cache, "file_lock", refuse)
    _entry(folder).add_device("cpu")  # known already: nothing to write, and no error
    assert _entry(folder).devices() == ["cpu"]
