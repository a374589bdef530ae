"""A run listing one document twice for a query is refused by the evaluator, as trec_eval refuses it
("duplicate docs"). Counted twice it took two ranks: with d1 and d2 relevant, the run d1 (3.0), d1 (2.0),
d2 (1.0) gave NDCG@3 = 1.3066 (above 1), and Recall@2 = 1.0 where the two distinct documents at the top
hold only d1 (0.5). The TREC readers refuse such files and Run.from_dict cannot hold them; a plugin
building a Run from arrays could."""

from __future__ import annotations

import numpy as np
import pytest

from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.run import Run

VOCAB = np.array(["d1", "d2", "d3"], dtype=object)


@pytest.fixture(params=["compiled", "python"], autouse=True)
def path(request, monkeypatch):
    """Both paths (harness.formats.native when built, and numpy) give the same answers."""
    from harness.formats import native

    if request.param == "compiled" and not native.available():
        pytest.skip("the compiled module is not built")
    if request.param == "python":
        monkeypatch.setenv(native.SWITCH, "0")
    return request.param


def run_of(offsets, codes, query_ids=("q", "p")):
    scores = np.arange(len(codes), 0, -1, dtype=np.float64)
    return Run.from_arrays(list(query_ids), np.array(offsets), np.array(codes), scores, VOCAB)


def test_the_evaluator_refuses_a_repeated_document():
    run = run_of([0, 3, 4], [0, 0, 1, 2])
    with pytest.raises(ValueError, match=r"^run lists document 'd1' twice for query 'q'"):
        Evaluator(["NDCG@3", "Recall@2"]).evaluate(run, Qrels.from_dict({"q": {"d1": 1, "d2": 1}}))


@pytest.mark.parametrize("offsets, codes, expected", [
    ([0, 3, 4], [0, 0, 1, 2], ("q", "d1")),
    ([0, 3, 6], [0, 1, 2, 2, 1, 1], ("p", "d2")),  # the repeat in the second query
    ([0, 3, 6], [0, 1, 2, 2, 1, 0], None),         # the same document in two queries is no repeat
    ([0, 1, 1], [2], None),
])
def test_repeated_entry(offsets, codes, expected):
    assert run_of(offsets, codes).repeated_entry() == expected


def test_repeated_entry_of_a_skewed_run():
    # q0 holds 30 entries, q1..q8 one each
    vocab = np.array([f"d{i}" for i in range(40)], dtype=object)
    ids = [f"q{i}" for i in range(9)]
    offsets = np.array([0, 30] + [30 + i for i in range(1, 9)])
    codes = np.array(list(range(30)) + [5] * 8)
    assert Run.from_arrays(ids, offsets, codes, np.ones(38), vocab).repeated_entry() is None
    codes[29] = 7  # d7 twice in q0
    assert Run.from_arrays(ids, offsets, codes, np.ones(38), vocab).repeated_entry() == ("q0", "d7")


def test_the_compiled_check_equals_a_plain_reference_in_both_of_its_ways():
    # The compiled check keeps an int32 per vocabulary entry, or, for a vocabulary over 16 times the entries
    # (a batch of queries over a large corpus: a page fault per page the codes touched, 1 ms per batch of
    # 31k entries over 1M documents), a hash table per query stamped with the query; both against a plain
    # Python reference on random runs (repeats planted or not, codes near 0 and near the vocabulary's end).
    from harness.formats import native

    if not native.available():
        pytest.skip("the compiled module is not built, or turned off by this parametrization (HARNESS_TREC_COMPILED=0)")
    rng = np.random.default_rng(41)
    hashed = 0
    for case in range(3000):
        n_vocab = int(rng.choice([5, 40, 1000, 100_000, 2**40]))
        lengths = rng.integers(0, 60, size=int(rng.integers(1, 6)))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        codes = np.concatenate([rng.choice(min(n_vocab, 10**6), size=int(n), replace=n > min(n_vocab, 10**6))
                                for n in lengths] or [np.zeros(0)]).astype(np.int64)
        if n_vocab > 10**6:
            codes = codes * (n_vocab // 10**6)  # (codes spread over a vocabulary too large to allocate per entry)
        if len(codes) and rng.random() < 0.5:  # plant a repeat inside one query
            q = int(rng.integers(0, len(lengths)))
            if lengths[q] >= 2:
                a, b = sorted(rng.choice(int(lengths[q]), size=2, replace=False))
                codes[offsets[q] + b] = codes[offsets[q] + a]
        expected = -1
        for q in range(len(lengths)):
            seen = set()
            for i in range(offsets[q], offsets[q + 1]):
                if codes[i] in seen:
                    expected = i
                    break
                seen.add(codes[i])
            if expected >= 0:
                break
        hashed += len(codes) * 16 < n_vocab
        assert native._built.repeated_entry(offsets, codes, n_vocab) == expected, case
    assert hashed > 1000  # both ways were exercised
