"""Helpers for the bench tests: a tiny BEIR folder and a retriever that can be made to hang.

Imported by the tests, and by ``harness bench`` subprocesses as ``bench_helpers:HangingRetriever``
(with this folder on PYTHONPATH).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from retrievers import Retriever

HANG_ENV = "BENCH_TEST_HANG"

CORPUS = {"d1": "apple banana", "d2": "banana cherry", "d3": "cherry date", "d4": "elderberry fig"}
QUERIES = {"q1": "banana cherry", "q2": "fig"}
QRELS = [("q1", "d2", 2), ("q1", "d3", 1), ("q2", "d4", 1)]


def write_tiny(folder: Path) -> Path:
    """A 4-document, 2-query BEIR folder (values worked by hand in the tests)."""
    import json

    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in CORPUS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS))
    return folder


class HangingRetriever(Retriever):
    """Returns every document with score 1 (ties everywhere); ``index()`` sleeps while $BENCH_TEST_HANG is
    set, so a test can kill a benchmark in the middle of this cell. ``seen_cache_dir`` records
    $HARNESS_CACHE_DIR at index time."""

    name = "hanging"

    def __init__(self, tag: str = "x"):
        self.tag = tag
        self.seen_cache_dir = None

    def params(self) -> dict:
        return {"tag": self.tag}

    def index(self, corpus: Corpus) -> None:
        self.seen_cache_dir = os.environ.get("HARNESS_CACHE_DIR")
        while os.environ.get(HANG_ENV):
            time.sleep(0.1)
        self.ids = list(corpus.ids)

    def search(self, queries: Queries, k: int) -> Run:
        return Run.from_dict({q: {d: 1.0 for d in self.ids[:k]} for q in queries.ids})


def set_when_waiting(monkeypatch, thread_name: str, event) -> None:
    """Make every lock of harness.atomic (file_lock, build_lock) set ``event`` when the thread named
    ``thread_name`` has to wait for it: how the tests of two writers at once learn that the second one waits
    for the first's lock (rather than deciding by a sleep)."""
    import threading

    from harness import atomic

    real_lock = atomic._lock_exclusive

    def lock_exclusive(handle, on_wait=None):
        def waiting():
            if threading.current_thread().name == thread_name:
                event.set()
            if on_wait is not None:
                on_wait()
        return real_lock(handle, waiting)
    monkeypatch.setattr(atomic, "_lock_exclusive", lock_exclusive)
