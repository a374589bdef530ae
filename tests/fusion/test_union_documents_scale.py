"""Run-file scale review: the documents a fusion's runs retrieve, found by a count per code.

``harness fuse`` of two 10M-entry runs (316 MB each) spent 27 s of its ~38 s in
``fuse._union_documents``, most of it in ``np.unique`` of each run's 10M document codes (numpy 2.4's
hash-based unique: 17 s for 10M int64 on this shared machine, a ``bincount`` 0.2 s); now 7.4 s, the
fused file byte for byte the same. No timing is asserted here: this pins the union (ids in string
order, each run's codes into it) on runs whose vocabulary holds ids they do not retrieve, and on an
empty run, against a plain-Python reference (sets and ``sorted``).
"""

from __future__ import annotations

import numpy as np

from harness.fusion.fuse import _union_documents
from harness.run import Run


def _reference(runs):
    ids = sorted({run.doc_vocab[c] for run in runs for c in run.doc_codes.tolist()})
    where = {d: i for i, d in enumerate(ids)}
    return ids, [[where[run.doc_vocab[c]] for c in run.doc_codes.tolist()] for run in runs]


def test_union_of_runs_with_unused_vocabulary_and_an_empty_run():
    rng = np.random.default_rng(3)
    vocab = [f"d{i}" for i in range(50)] + ["é", "文", "a\u00a0b", "z" * 300]
    runs = []
    for _ in range(3):
        run = {f"q{q}": {vocab[i]: float(rng.random()) for i in rng.choice(len(vocab), 7, replace=False)}
               for q in range(4)}
        runs.append(Run.from_dict(run))
    sub = Run.from_dict({"q0": {"d3": 1.0}})
    # a run whose vocabulary holds ids it does not retrieve (a slice of a larger run)
    wide = Run.from_arrays(["q9"], np.array([0, 2]), np.array([5, 1]), np.array([2.0, 1.0]),
                           ["a", "b", "c", "d", "e", "f"])
    empty = Run.from_dict({})
    for group in ([*runs, sub], [runs[0], wide], [wide, empty], [empty, empty]):
        vocab_out, codes = _union_documents(group)
        ids, want = _reference(group)
        assert vocab_out.tolist() == ids
        assert [c.tolist() for c in codes] == want
