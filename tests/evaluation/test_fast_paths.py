"""The evaluator's two fast paths in Run, each against the plain path or a plain-Python reference:

* ``Run.codes_of``: id -> code lookup by the built index, by binary search in string order (a run
  that carries ``vocab_rank``, as a retriever's) or by one scan of the vocabulary (taken for large
  vocabularies when no index is built); the evaluator gives identical values either way.
* ``Run.canonical``: one padded row sort per query (similar query lengths) or a global lexsort;
  both must give Python's ``sorted`` by (score desc, doc id desc).
"""

from __future__ import annotations

import numpy as np

from harness.evaluation import DEFAULT_FAMILIES, Evaluator, metrics_for
from harness.qrels import Qrels
from harness.run import Run


def _fresh(run: Run) -> Run:
    """The same run without its id index (as a retriever hands it over)."""
    return Run.from_arrays(run.query_ids, run.offsets, run.doc_codes, run.scores, run.doc_vocab)


def test_codes_of_both_paths():
    vocab = [f"d{i}" for i in range(100)]
    run = Run.from_arrays(["q"], [0, 3], [5, 7, 9], [3.0, 2.0, 1.0], vocab)
    ids = ["d7", "nope", "d0", "d7", "d99"]
    scanned = run.codes_of(ids)  # 100 > 4 * 5: scans without building the index
    assert run._vocab_index is None
    assert scanned.tolist() == [7, -1, 0, 7, 99]
    run.vocab_index  # build it
    assert run.codes_of(ids).tolist() == [7, -1, 0, 7, 99]
    assert Run.from_arrays(["q"], [0, 0], [], [], []).codes_of(["x"]).tolist() == [-1]


def test_codes_of_by_rank_is_the_dict_lookup_randomized():
    """A vocabulary of random (non-ASCII too) ids with their string ranks: the binary search gives the
    built index's codes for present, absent, repeated and empty ids; the sorted view is kept across
    derived runs of the same vocabulary; a rank that is not a permutation falls back to the scan."""
    from retrievers.topk import string_ranks

    rng = np.random.default_rng(5)
    alphabet = list("ab0Z-é€𝄞")
    for n in (1, 30, 400, 2000):
        vocab = np.empty(n, dtype=object)
        vocab[:] = list(dict.fromkeys("".join(rng.choice(alphabet, rng.integers(1, 6))) + str(i) for i in range(n)))
        ids = rng.choice(vocab, 5).tolist() + ["", "zzz", "a", vocab[0], str(n + 1)]
        run = Run.from_arrays(["q", "r"], [0, 1, 1], [0], [1.0], vocab, vocab_rank=string_ranks(vocab))
        expected = [{d: i for i, d in enumerate(vocab.tolist())}.get(d, -1) for d in ids]
        assert run.codes_of(ids).tolist() == expected
        searched = n > 4 * len(ids)  # (a small vocabulary builds the index instead)
        assert (run._rank_view is not None and run._vocab_index is None) == searched
        derived = run.truncated(1).without_identical_ids()
        assert derived.codes_of(ids).tolist() == expected
        assert derived._rank_view is run._rank_view or not searched
        twice = Run.from_arrays(["q"], [0, 1], [0], [1.0], vocab, vocab_rank=np.zeros(n, dtype=np.int64))
        assert twice.codes_of(ids).tolist() == expected and twice._rank_view is None
        # the inverse permutation given by the producer (a retriever's corpus order) is used as is
        rank = string_ranks(vocab)
        order = np.argsort(rank)
        given = Run.from_arrays(["q"], [0, 1], [0], [1.0], vocab, vocab_rank=rank, vocab_order=order)
        assert given._rank_view[2] is order and given.codes_of(ids).tolist() == expected
        if n > 1:  # an order that is not the inverse of the ranks is not taken (the lookups then check their own)
            wrong = Run.from_arrays(["q"], [0, 1], [0], [1.0], vocab, vocab_rank=rank, vocab_order=order[::-1].copy())
            assert wrong._rank_view is None and wrong.codes_of(ids).tolist() == expected
            beyond = Run.from_arrays(["q"], [0, 1], [0], [1.0], vocab, vocab_rank=rank, vocab_order=order + n)
            assert beyond._rank_view is None and beyond.codes_of(ids).tolist() == expected


def test_evaluation_identical_without_index(make_case):
    # A large vocabulary (most documents retrieved by one query only) forces the scan path.
    run, qrels = make_case(seed=31, n_queries=30, n_docs=3000, max_depth=800)
    fresh = _fresh(run)
    # A few judgments per query: the first 40 judged rows of each of 10 queries.
    keep_q = set(qrels.queries()[:10])
    seen: dict[str, int] = {}
    rows = []
    for row in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist()):
        if row[0] in keep_q and seen.setdefault(row[0], 0) < 40:
            seen[row[0]] += 1
            rows.append(row)
    qrels_small = Qrels.from_rows(rows)
    assert len(fresh.doc_vocab) > 4 * (fresh.n_queries + len(qrels_small))
    names = metrics_for((*DEFAULT_FAMILIES, "Success", "Judged", "DCG_exp"), (1, 10, 100)) + ["bpref", "R-Prec", "AP"]
    scanned = Evaluator(names).evaluate(fresh, qrels_small)
    assert fresh._vocab_index is None, "the scan path was not taken"
    run.vocab_index
    indexed = Evaluator(names).evaluate(run, qrels_small)
    assert scanned.query_ids.tolist() == indexed.query_ids.tolist() and scanned.n_queries >= 5
    for name, values in indexed.values.items():
        assert np.array_equal(scanned.values[name], values), name
    # Identical ids are dropped on the scan path too.
    assert len(fresh.without_identical_ids()) == len(run.without_identical_ids()) < len(run)



def test_identical_ids_dropped_whether_few_or_most_queries_are_document_ids():
    """Both ways of finding them (entries of the few queries whose id is a document id, or one
    comparison over the whole run when those are most of it, as in MS MARCO) drop exactly the
    entries whose document id is their query id, and nothing else."""
    most = Run.from_dict({"a": {"a": 3.0, "b": 2.0}, "b": {"c": 1.0, "b": 0.5}, "x": {"a": 1.0}})
    assert most.without_identical_ids().to_dict() == {"a": {"b": 2.0}, "b": {"c": 1.0}, "x": {"a": 1.0}}
    wide = {f"q{i}": {f"d{j}": float(j) for j in range(20)} for i in range(10)}
    few = Run.from_dict({"d3": {"d3": 5.0, "d1": 4.0}, **wide})  # 2 of 202 entries checked
    assert few.without_identical_ids().to_dict() == {"d3": {"d1": 4.0}, **wide}
    assert np.array_equal(few.without_identical_ids().offsets[:3], [0, 1, 21])
    none = Run.from_dict(wide)
    assert none.without_identical_ids() is none


def _reference_order(run: Run) -> list[list[str]]:
    out = []
    for i in range(run.n_queries):
        start, end = run.offsets[i], run.offsets[i + 1]
        pairs = zip(run.scores[start:end].tolist(), run.doc_vocab[run.doc_codes[start:end]].tolist())
        out.append([d for _, d in sorted(pairs, reverse=True)])
    return out


def test_canonical_order_on_both_sort_paths():
    rng = np.random.default_rng(41)
    vocab = [f"d{i}" for i in range(300)]
    # Same lengths (reshape), similar lengths (padded rows), one long query (global lexsort).
    for lengths in ([50] * 40, [0, 3, 50, 49, 50, 1, 0, 50], [1, 200] + [2] * 30):
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        codes = np.concatenate([rng.choice(300, size=n, replace=False) for n in lengths]).astype(np.int64)
        scores = rng.integers(-3, 4, size=len(codes)).astype(np.float64)
        scores[rng.random(len(codes)) < 0.05] = -np.inf
        scores[rng.random(len(codes)) < 0.05] = np.inf
        run = Run.from_arrays([f"q{i}" for i in range(len(lengths))], offsets, codes, scores, vocab)
        canonical = run.canonical()
        assert canonical.is_canonical()
        assert [canonical.doc_ids(i) for i in range(run.n_queries)] == _reference_order(run)


def test_canonical_fixes_only_tie_groups_when_scores_are_in_order():
    # Scores already descending within each query (as most run files): only the tie groups are
    # reordered, by id descending; vocabulary codes unrelated to string order ("d10" < "d9").
    rng = np.random.default_rng(43)
    vocab = [f"d{i}" for i in range(300)]
    lengths = [60, 0, 45, 60, 1]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = np.concatenate([rng.choice(300, size=n, replace=False) for n in lengths]).astype(np.int64)
    scores = np.concatenate([np.sort(rng.integers(0, 5, size=n))[::-1] for n in lengths]).astype(np.float64)
    for vocab_sorted in (False, True):
        order = sorted(range(300), key=vocab.__getitem__) if vocab_sorted else range(300)
        v = [vocab[i] for i in order]
        remap = np.empty(300, dtype=np.int64)
        remap[list(order)] = np.arange(300)
        run = Run.from_arrays([f"q{i}" for i in range(len(lengths))], offsets, remap[codes], scores, v,
                              vocab_sorted=vocab_sorted)
        assert not run.is_canonical()
        canonical = run.canonical()
        assert np.array_equal(canonical.scores, run.scores) and canonical.is_canonical()
        assert [canonical.doc_ids(i) for i in range(run.n_queries)] == _reference_order(run)


def test_truncated_keeps_each_querys_first_entries_randomized():
    """Run.truncated against slicing each query's canonical entries in Python: uneven depths, empty
    queries, depths below, at and above every query's length."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        lengths = rng.integers(0, 12, rng.integers(1, 8))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        codes = np.concatenate([rng.permutation(20)[:n] for n in lengths]).astype(np.int64)
        run = Run.from_arrays([f"q{i}" for i in range(len(lengths))], offsets, codes,
                              rng.integers(0, 4, len(codes)).astype(float), [f"d{i}" for i in range(20)]).canonical()
        for depth in (1, 3, 11, 12, 50):
            cut = run.truncated(depth)
            expected = {q: dict(list(docs.items())[:depth]) for q, docs in run.to_dict().items()}
            assert cut.to_dict() == expected and cut.query_ids.tolist() == run.query_ids.tolist()
            assert [list(d) for d in cut.to_dict().values()] == [list(d) for d in expected.values()]
            assert cut.is_canonical()


def test_with_scores_keeps_the_canonical_mark_only_for_equal_scores():
    """judge() ranks on float32-rounded scores: a retriever's run (float32 values already) keeps its
    known canonical order without a second check; rounding that creates a tie (1 + 1e-9 and 1.0 both
    round to 1.0) does not, and the tie is then ordered by doc id descending."""
    exact = Run.from_dict({"q": {"a": 0.5, "b": 0.25, "c": 0.25}}).canonical()
    assert exact._canonical and exact.doc_ids(0) == ["a", "c", "b"]
    rounded = exact.with_scores(exact.scores.astype(np.float32).astype(np.float64))
    assert rounded._canonical and rounded.scores is not exact.scores
    close = Run.from_dict({"q": {"a": 1.0 + 1e-9, "b": 1.0}}).canonical()
    assert close.doc_ids(0) == ["a", "b"]
    tied = close.with_scores(close.scores.astype(np.float32).astype(np.float64))
    assert not tied._canonical
    assert tied.canonical().doc_ids(0) == ["b", "a"]
    nan = Run.from_arrays(["q"], np.array([0, 2]), np.array([0, 1]), np.array([np.nan, 1.0]), ["a", "b"])
    assert not nan.with_scores(nan.scores.copy())._canonical
