"""The versions a part's record holds (a Ray actor writes its own with each part), merged into the entry's
versions.json by the job that resumes the entry (retrievers/dense/cache.py ``parts_versions``,
``record_versions``): a part that records none still counts as ``unknown`` where versions.json is missing."""

from __future__ import annotations

import json

import numpy as np

from retrievers.dense.cache import EmbeddingCache

A = {"sentence-transformers": "5.0.0", "torch": "2.13.0", "transformers": "4.50.0"}
B = {"sentence-transformers": "5.1.0", "torch": "2.13.0", "transformers": "4.51.0"}


def entry(folder) -> EmbeddingCache:
    e = EmbeddingCache(folder, 9, np.arange(9), 3, {"kind": "test"})
    e.prepare()
    return e


def rows(e, i):
    return np.ones((len(e.chunk_rows(i)), 2), np.float32) * i


def test_parts_versions_merges_the_records_and_says_where_one_has_none(tmp_path):
    e = entry(tmp_path / "e")
    e.write_part(0, rows(e, 0), A)
    e.write_part(1, rows(e, 1), B)
    e.write_part(2, rows(e, 2))  # (a local encode's part: its versions are versions.json's)
    assert json.loads(e.part_record_path(0).read_text())["versions"] == A
    merged = {"sentence-transformers": ["5.0.0", "5.1.0"], "torch": ["2.13.0"], "transformers": ["4.50.0", "4.51.0"]}
    assert e.parts_versions([0, 1]) == (merged, False)
    assert e.parts_versions([0, 1, 2]) == (merged, True)
    assert e.parts_versions([]) == ({}, False)


def test_recorded_parts_leave_no_unknown_and_unrecorded_ones_do(tmp_path):
    e = entry(tmp_path / "e")
    e.write_part(0, rows(e, 0), A)
    written, unrecorded = e.parts_versions([0])
    e.add_versions(B, earlier=lambda: unrecorded, written=written)
    assert json.loads((e.folder / "versions.json").read_text()) == {
        "sentence-transformers": ["5.0.0", "5.1.0"], "torch": ["2.13.0"], "transformers": ["4.50.0", "4.51.0"]}

    f = entry(tmp_path / "f")
    f.write_part(0, rows(f, 0), A)
    f.write_part(1, rows(f, 1))
    written, unrecorded = f.parts_versions([0, 1])
    f.add_versions(B, earlier=lambda: unrecorded, written=written)
    assert json.loads((f.folder / "versions.json").read_text()) == {
        "sentence-transformers": ["5.0.0", "5.1.0", "unknown"], "torch": ["2.13.0", "unknown"],
        "transformers": ["4.50.0", "4.51.0", "unknown"]}
