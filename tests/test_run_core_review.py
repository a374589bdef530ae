"""Review of the core run types (harness/run.py, harness/columns.py, retrievers/topk.py) against a
plain-Python reference: a query's canonical order is ``sorted(docs.items(), key=lambda kv: (kv[1],
kv[0]), reverse=True)`` (score descending, ties by document id descending in Python ``str`` order,
i.e. code point order), the top k its first k, identical ids dropped by ``d != q``.

Defects fixed here:

* A NaN score last in its query (or a query's only entry) passed ``Run.canonical()`` unnoticed, while
  the same entries in another order were refused ("run scores contain NaN"): fusion ranked the NaN
  document last and fused it silently, and ``write_run`` wrote a ``nan`` line its own reader refuses.
  A NaN is now refused wherever it stands (a NaN has no rank), naming the query.
* ``top_k_positive(scores, 0, ...)`` raised numpy's "kth(=n) out of bounds" instead of giving no
  documents (``top_k`` gives an empty selection for k = 0).
* ``string_ranks`` of a list sorted the ids as fixed-width numpy strings, which drop trailing NULs:
  "a\\0" ranked equal to "a" (by position) instead of after it.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import IdColumn, inverse_permutation, object_array
from harness.run import Run, concat_runs
from retrievers.topk import run_from_topk, string_ranks, top_k, top_k_positive

NAN = float("nan")

# Ids: non-BMP, combining marks (NFC-equal pairs "é"/"e\u0301", "Å"/"A\u030a"), NUL, the empty
# string, ids that are prefixes of each other, digits that sort as strings.
ATOMS = ["a", "b", "ab", "", "\0", "a\0", "é", "e\u0301", "\U0001D11E", "\U0001F600", "\u00c5", "A\u030a",
         "Z", "10", "9", "\uffff", " "]
# Scores: signed zeros, infinities, subnormals (float64 and float32), float32-only ties, duplicates.
SCORES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 5e-324, -5e-324, 1e-45, 1.0 + 2**-30, 1.0 + 2**-52,
          3.4e38, 1e39, 0.5]


def reference(docs: dict) -> list:
    """The canonical order of one query's ``{doc_id: score}``, by the definition."""
    return sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)


def entries(run: Run) -> dict:
    """``{query: [(doc_id, score bits)]}`` in the run's stored order (the sign of a zero kept)."""
    vocab = run.doc_vocab
    out = {}
    for i, q in enumerate(run.query_ids.tolist()):
        s, e = run.offsets[i], run.offsets[i + 1]
        out[q] = [(d, np.float64(x).tobytes()) for d, x in zip(vocab[run.doc_codes[s:e]].tolist(),
                                                              run.scores[s:e].tolist())]
    return out


def as_entries(items: list) -> list:
    return [(d, np.float64(x).tobytes()) for d, x in items]


def random_results(rng: random.Random) -> dict:
    pool = list({"".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 20))})
    results = {}
    for i in range(rng.randint(0, 5)):
        q = rng.choice(pool) if rng.random() < 0.5 else f"q{i}"
        results.setdefault(q, {rng.choice(pool): rng.choice(SCORES) for _ in range(rng.randint(0, 10))})
    return results


def builds(results: dict):
    """The same run as from_dict builds it, over a vocabulary in string order, and with string ranks
    (an object array and an IdColumn where the ids are UTF-8)."""
    base = Run.from_dict(results)
    yield base
    vocab = base.doc_vocab.tolist()
    in_order = sorted(vocab)
    code = {d: i for i, d in enumerate(in_order)}
    sorted_codes = np.array([code[vocab[c]] for c in base.doc_codes.tolist()], dtype=np.int64)
    yield Run.from_arrays(base.query_ids.tolist(), base.offsets.copy(), sorted_codes, base.scores.copy(), in_order,
                          vocab_sorted=True)
    rank = string_ranks(object_array(vocab))
    for source in (object_array(vocab), IdColumn(pa.array(vocab, type=pa.string()))):
        yield Run.from_arrays(base.query_ids.tolist(), base.offsets.copy(), base.doc_codes.copy(), base.scores.copy(),
                              source, vocab_rank=rank, vocab_order=inverse_permutation(rank))


def test_run_operations_match_the_plain_reference():
    """600 random runs x 4 builds: canonical, is_canonical, truncated (k 0, 1, 3, huge),
    without_identical_ids, to_dict, doc_ids, entry_query_index and codes_of equal the reference, and
    no operation changes its input's arrays."""
    rng = random.Random(20261126)
    for _ in range(600):
        results = random_results(rng)
        want = {q: reference(d) for q, d in results.items()}
        for run in builds(results):
            before = [a.copy() for a in (run.offsets, run.doc_codes, run.scores)]
            assert run.to_dict() == results and list(run.to_dict()) == list(results)
            assert run.entry_query_index().tolist() == [i for i, q in enumerate(results) for _ in results[q]]
            assert [run.doc_ids(i) for i in range(run.n_queries)] == [list(d) for d in results.values()]
            canonical = run.canonical()
            assert entries(canonical) == {q: as_entries(w) for q, w in want.items()}
            assert canonical.is_canonical()
            assert run.is_canonical() == (entries(run) == entries(canonical))
            for k in (0, 1, 3, 2**62):
                assert entries(run.truncated(k)) == {q: as_entries(w[:k]) for q, w in want.items()}
            dropped = {q: [(d, s) for d, s in entries(run)[q] if d != q] for q in results}
            assert entries(run.without_identical_ids()) == dropped
            assert entries(canonical.without_identical_ids()) == {
                q: as_entries([(d, s) for d, s in w if d != q]) for q, w in want.items()}
            index = {d: i for i, d in enumerate(run.doc_vocab.tolist())}
            probes = list(results) + run.doc_vocab.tolist()[:3] + ["", "\0", "zz", "e\u0301"]
            assert run.codes_of(probes).tolist() == [index.get(p, -1) for p in probes]
            after = (run.offsets, run.doc_codes, run.scores)
            assert all(np.array_equal(a, b) for a, b in zip(before, after))
            assert run.scores.tobytes() == before[2].tobytes()


def test_concat_of_runs_with_different_vocabularies_is_the_union():
    rng = random.Random(7)
    for _ in range(150):
        parts, used = [], set()
        for _ in range(rng.randint(1, 4)):
            part = {q: d for q, d in random_results(rng).items() if q not in used}
            used |= set(part)
            parts.append(part)
        union = {q: d for part in parts for q, d in part.items()}
        runs = [Run.from_dict(p) if rng.random() < 0.5 else Run.from_dict(p).canonical() for p in parts]
        joined = concat_runs(runs)
        assert joined.to_dict() == union and list(joined.query_ids) == list(union)
        assert entries(joined.canonical()) == {q: as_entries(reference(d)) for q, d in union.items()}


@pytest.mark.parametrize("results", [
    {"q": {"a": 1.0, "b": NAN}, "r": {"c": 2.0}},  # last in its query (was accepted)
    {"q": {"b": NAN}},                              # a run's only entry (was accepted)
    {"r": {"c": 2.0}, "q": {"b": NAN}},             # the last query's only entry (was accepted)
    {"q": {"b": NAN, "a": 1.0}},                    # first (refused before too)
])
def test_a_nan_score_is_refused_wherever_it_stands(results):
    """The same entries in any order: refused alike (a NaN has no rank); before, a NaN last in its
    query was kept as if canonical, so ``fuse_runs`` ranked it last and ``write_run`` wrote ``nan``."""
    run = Run.from_dict(results)
    assert not run.is_canonical()
    with pytest.raises(ValueError, match=r"run scores contain NaN \(query 'q'\)"):
        run.canonical()
    with pytest.raises(ValueError, match="NaN"):
        run.truncated(10)


def test_top_k_positive_of_k_zero_is_empty():
    scores = np.array([2.0, 1.0, 3.0], dtype=np.float32)
    assert top_k_positive(scores, 0, np.array([0, 1, 2])).tolist() == []  # as top_k gives for k = 0
    assert [c.tolist() for c in top_k(scores[None, :], 0, np.array([0, 1, 2]))] == [[]]
    assert top_k_positive(scores, 2, np.array([0, 1, 2])).tolist() == [2, 0]


def test_top_k_positive_matches_the_reference():
    """Selection on float32 scores, then id descending; 500 random rows with float32-only ties."""
    rng = np.random.default_rng(3)
    ids = object_array(["b", "a", "é", "e\u0301", "\U0001D11E", "a\0", "", "ab", "10", "9"])
    rank = string_ranks(ids)
    for _ in range(500):
        n = int(rng.integers(0, len(ids) + 1))
        scores = rng.choice(np.array([1.0, 1.0 + 2**-30, 2.0, 1e-45, 3.4e38, np.inf]), n).astype(np.float32)
        k = int(rng.integers(0, 12))
        want = sorted(range(n), key=lambda j: (float(scores[j]), ids[j]), reverse=True)[:k]
        assert top_k_positive(scores, k, rank[:n]).tolist() == want


def test_string_ranks_of_a_list_keep_trailing_nuls():
    ids = ["a\0", "a", "", "\0", "b"]
    want = [sorted(ids).index(d) for d in ids]  # Python str order: "" < "\0" < "a" < "a\0" < "b"
    assert want == [3, 2, 0, 1, 4]
    assert string_ranks(ids).tolist() == want
    assert string_ranks(object_array(ids)).tolist() == want


def test_run_from_topk_split_and_concatenated_is_the_whole_top_k():
    """A corpus-shared vocabulary (IdColumn, ranks), queries in batches joined by concat_runs: each
    query's top k is the reference's float32 top k, in float64 canonical order."""
    rng = np.random.default_rng(5)
    ids = object_array([f"{p}{i}" for i, p in enumerate(rng.choice(["d", "é", "𝄞", "a\u0301", "á", ""], 300))])
    rank = string_ranks(ids)
    order = inverse_permutation(rank)
    column = IdColumn(pa.array(ids.tolist()))
    table = rng.choice(np.array([0.5, 1.0, 1.0 + 2**-30, -0.0, 0.0, np.inf, -np.inf, 1e-40]), (9, len(ids)))
    chosen = top_k(table, 20, rank)
    qids = [f"q{i}" if i % 3 else str(ids[i]) for i in range(9)]
    parts = [run_from_topk(qids[a:b], chosen[a:b], [table[i][chosen[i]] for i in range(a, b)], column,
                           id_rank=rank, id_order=order) for a, b in ((0, 4), (4, 4), (4, 9))]
    joined = concat_runs(parts).canonical()
    for i, q in enumerate(qids):
        kept = [d for d, _ in reference({d: float(np.float32(s)) for d, s in zip(ids.tolist(), table[i])})][:20]
        position = {d: j for j, d in enumerate(ids.tolist())}
        assert joined.doc_ids(i) == [d for d, _ in reference({d: float(table[i][position[d]]) for d in kept})]
        assert joined.without_identical_ids().doc_ids(i) == [d for d in joined.doc_ids(i) if d != q]


@pytest.mark.parametrize("score, error, shown", [
    ("1.0", TypeError, "not a number: str '1.0'"),     # float() would read it as 1.0
    (None, TypeError, "not a number: NoneType None"),  # np.array(dtype=float) would make it NaN
    (b"1", TypeError, "not a number: bytes b'1'"),
    (1 + 0j, TypeError, "not a number: complex"),
    (10**400, ValueError, "past a double's range: int 1000"),
])
def test_from_dict_refuses_a_score_that_is_no_real_number(score, error, shown):
    """pytrec_eval refuses such scores ("Unable to extract query/object scores"); from_dict read a str
    as its number and None as NaN (refused only later, at evaluation, without naming the document)."""
    with pytest.raises(error, match=r"run score of query 'q', document 'd' is " + shown.replace("(", r"\(")):
        Run.from_dict({"q": {"e": 2.0, "d": score}})


def test_from_dict_takes_every_real_number_as_its_double():
    """ints, floats, numpy numbers, Fractions and bools (pytrec_eval: True scores 1.0) are numbers."""
    from fractions import Fraction

    run = Run.from_dict({"q": {"a": 1, "b": np.float32(1.5), "c": np.int64(-2), "d": Fraction(1, 4), "e": True,
                               "f": 2**1023}})
    assert run.scores.tolist() == [1.0, 1.5, -2.0, 0.25, 1.0, 2.0**1023]


def test_without_empty_queries_keeps_the_others_and_their_order():
    """A run's TREC file holds no query without entries; Run.without_empty_queries is that run (the
    pipeline stores and passes on computed stage runs so, as a cache hit reads them back)."""
    run = Run.from_dict({"q1": {}, "q2": {"a": 1.0, "b": 2.0}, "q3": {}, "q4": {"c": 0.5}})
    kept = run.without_empty_queries()
    assert kept.query_ids.tolist() == ["q2", "q4"] and kept.offsets.tolist() == [0, 2, 3]
    assert kept.to_dict() == {"q2": {"b": 2.0, "a": 1.0}, "q4": {"c": 0.5}}
    assert kept.without_empty_queries() is kept
