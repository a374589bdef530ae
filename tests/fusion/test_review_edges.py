"""Inputs that ``harness.fusion.fuse`` mishandled: odd document ids, infinite scores.

* numpy's unicode strings drop trailing NULs, so ``"a\\x00"`` and ``"a"`` became one document.
* One very long id made every cell of the array as wide: 20,001 ids and one of 4,000 characters
  took 320 MB (and a copy to sort it) instead of a few MB.
* An infinite input score that a normalisation turns into NaN failed as "run scores contain NaN"
  (with a numpy warning), as if an input run held NaN.
"""

from __future__ import annotations

import tracemalloc

import pytest

from harness.fusion import fuse
from harness.run import Run


def test_ids_ending_in_nul_stay_distinct():
    a = Run.from_dict({"q": {"a\x00": 2.0, "a": 1.0}})
    b = Run.from_dict({"q": {"b": 2.0}})
    # combsum after min-max: run a gives a\x00 -> 1, a -> 0; run b's single document hits the floor -> 0;
    # ties by document id descending ("b" > "a")
    assert fuse([a, b], "combsum").to_dict() == {"q": {"a\x00": 1.0, "b": 0.0, "a": 0.0}}
    # RRF (k 60): a\x00 rank 1, a rank 2 in run a; b rank 1 in run b
    assert fuse([a, b], "rrf").to_dict() == {"q": {"b": 1 / 61, "a\x00": 1 / 61, "a": 1 / 62}}


def test_one_long_id_does_not_widen_every_id():
    n = 10_000
    long_id = "x" * 4000
    a = Run.from_dict({"q": {**{f"d{i}": float(i) for i in range(n)}, long_id: n - 0.5}})
    b = Run.from_dict({"q": {f"d{i}": float(-i) for i in range(n)}})
    tracemalloc.start()
    try:
        fused = fuse([a, b], "rrf", depth=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"{peak / 2**20:.0f} MiB"
    # RRF (k 60): the long id is rank 1 in run a only; d0 rank 10001 in a, 1 in b; d9999 rank 2 in a, 10000 in b
    expected = {"d0": 1 / 61 + 1 / (61 + n), long_id: 1 / 61, "d9999": 1 / 62 + 1 / (60 + n)}
    assert fused.to_dict() == {"q": expected} and fused.doc_ids(0) == ["d0", long_id, "d9999"]


def test_infinite_scores_that_make_nan_are_refused_by_name():
    # TREC runs may hold inf (trec_eval's atof reads it); min-max of [inf, 1] is (inf - 1) / (inf - 1) = NaN.
    a = Run.from_dict({"q": {"a": float("inf"), "c": 1.0}})
    b = Run.from_dict({"q": {"b": 2.0}})
    with pytest.raises(ValueError, match=r"fusion \(combsum, norm min-max\) gives NaN scores: an input run has an "
                                         r"infinite score"):
        fuse([a, b], "combsum")
    # the rank normalisation uses the order only: 1 - i / n
    assert fuse([a, b], "combsum", norm="rank").to_dict() == {"q": {"b": 1.0, "a": 1.0, "c": 0.5}}
