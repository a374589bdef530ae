"""A run whose vocabulary is a corpus's Arrow id column (``harness.columns.IdColumn``): its codes,
derived runs, written lines and evaluation are those of the same run over the object array of the
ids, and no Python string per corpus id is made unless a reader asks for ``doc_vocab``."""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import IdColumn, object_array, string_buffers
from harness.formats import native
from harness.run import Run, concat_runs
from retrievers.topk import string_ranks

needs_native = pytest.mark.skipif(not native.available(), reason="harness._trecrun is not built")

ALPHABET = list("ab0Z-é€𝄞")


def _ids(rng, n: int) -> list[str]:
    return list(dict.fromkeys("".join(rng.choice(ALPHABET, rng.integers(1, 6))) + str(i) for i in range(n)))


def _column(ids: list[str], rng) -> IdColumn:
    """The ids as an IdColumn: string or large_string, sliced or chunked (as a corpus table holds them)."""
    kind = pa.large_string() if rng.random() < 0.5 else pa.string()
    padded = pa.array(["pad"] + ids + ["pad"], type=kind).slice(1, len(ids))
    if rng.random() < 0.5 and len(ids) > 2:
        cut = len(ids) // 3
        return IdColumn(pa.chunked_array([padded.slice(0, cut), padded.slice(cut)], type=kind))
    return IdColumn(padded)


@needs_native
@pytest.mark.parametrize("n", [0, 1, 30, 2000])
def test_find_ranked_is_the_dict_lookup(n):
    """Present, absent, repeated, empty and non-ASCII ids (astral too), and a lone surrogate (never a
    corpus id: not UTF-8): the code a dict of the ids gives, -1 where absent."""
    rng = np.random.default_rng(n)
    ids = _ids(rng, n)
    column = _column(ids, rng)
    order = np.argsort(string_ranks(object_array(ids)), kind="stable")
    probes = (rng.choice(ids, 7).tolist() if ids else []) + ["", "zzz", "a", "\ud800", "é", "𝄞9"] + ids[:3]
    want = {d: i for i, d in enumerate(ids)}
    assert native.find_ranked(*column.buffers(), order, probes).tolist() == [want.get(p, -1) for p in probes]


@needs_native
def test_find_ranked_refuses_an_order_or_offsets_out_of_range():
    offsets, data = string_buffers(pa.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match="out of range"):
        native.find_ranked(offsets, data, np.array([0, 1, 7]), ["c"])
    with pytest.raises(ValueError, match="int64"):
        native.find_ranked(offsets, data, np.array([0, 1]), ["c"])
    with pytest.raises(ValueError, match="out of range"):
        native.find_ranked(np.array([0, 1, 2, 99]), data, np.array([0, 1, 2]), ["c"])
    with pytest.raises(TypeError):
        native.find_ranked(offsets, data, np.array([0, 1, 2]), [3])


@needs_native
def test_format_lines_reads_an_arrow_vocabulary_as_the_list():
    """The same bytes from a list of the ids and from their Arrow buffers (non-ASCII ids, ties, many
    distinct scores); offsets past the data are refused."""
    from harness import _trecrun

    rng = np.random.default_rng(3)
    ids = _ids(rng, 500)
    offsets = np.array([0, 0, 40, 41, 300], dtype=np.int64)
    codes = rng.integers(0, len(ids), 300).astype(np.int64)
    scores = np.round(rng.random(300), 2)
    column = _column(ids, rng)
    qids = ["q0", "é", "q2", "q3"]
    want = _trecrun.format_lines(qids, offsets, codes, scores, ids, "tag", 2)
    assert _trecrun.format_lines(qids, offsets, codes, scores, column.buffers(), "tag", 2) == want
    assert want.count(b"\n") == 300
    bad = (np.array([0, 1, 2, 10**6] + [3] * (len(ids) - 2), dtype=np.int64), b"abc")
    with pytest.raises(ValueError, match="past the data"):
        _trecrun.format_lines(["q"], np.array([0, 1]), np.array([2]), np.array([1.0]), bad, "t")


@needs_native
@pytest.mark.parametrize("threads", [1, 2, 3, 4, 64])
def test_format_lines_of_an_arrow_vocabulary_on_threads_are_the_per_line_bytes(threads):
    """Over 8,192 entries (so split among threads by whole queries): the bytes of one f-string per
    entry, with empty queries first, last and between, one query holding most entries, runs of equal
    scores, -0.0 next to 0.0, infinities, NaN and non-ASCII ids."""
    from harness import _trecrun

    rng = np.random.default_rng(11)
    ids = _ids(rng, 4000)
    sizes = [0, 7, 0, 9000, 1, 0, 2500, 3, 0]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    codes = rng.integers(0, len(ids), n).astype(np.int64)
    scores = np.repeat(np.round(rng.random(n // 4 + 1) * 30, 1), 4)[:n]  # runs of 4 equal scores
    scores[100:104] = [0.0, -0.0, -0.0, 0.0]
    scores[200:203] = [np.inf, -np.inf, np.nan]
    qids = [f"q{i}é" for i in range(len(sizes))]
    values = scores.tolist()
    expected = "".join(f"{qids[q]} Q0 {ids[codes[e]]} {e - offsets[q] + 1} {values[e]!r} tag\n"
                       for q in range(len(sizes)) for e in range(offsets[q], offsets[q + 1])).encode()
    for kind in (pa.string(), pa.large_string()):  # int32 and int64 offsets, read as they are
        vocab = IdColumn(pa.array(["pad"] + ids, type=kind).slice(1)).buffers()
        assert vocab[0].dtype == (np.int32 if kind == pa.string() else np.int64)
        assert _trecrun.format_lines(qids, offsets, codes, scores, vocab, "tag", threads) == expected
    column = _column(ids, rng)
    late = codes.copy()
    late[n - 5] = len(ids)  # in the last thread's share
    with pytest.raises(IndexError, match="out of range"):
        _trecrun.format_lines(qids, offsets, late, scores, column.buffers(), "tag", threads)
    vocab_offsets, data = column.buffers()
    short = (vocab_offsets, bytes(memoryview(data)[:int(vocab_offsets[codes[n - 3]])]))  # the id of entry n - 3 is cut
    with pytest.raises(ValueError, match="past the data"):
        _trecrun.format_lines(qids, offsets, codes, scores, short, "tag", threads)


def _pair(seed: int, n_docs: int = 3000):
    """(a run over an IdColumn with its ranks and order, the same run over the object array, ids)."""
    rng = np.random.default_rng(seed)
    ids = _ids(rng, n_docs)
    rank = string_ranks(object_array(ids))
    order = np.argsort(rank, kind="stable")
    qids = [ids[5], "q1", ids[9], "q3"]  # two query ids are document ids (dropped as identical)
    offsets = np.array([0, 50, 50, 120, 200])
    codes = np.concatenate([rng.choice(n_docs, 50, replace=False), rng.choice(n_docs, 70, replace=False),
                            rng.choice(n_docs, 80, replace=False)])
    codes[0], codes[50] = 5, 9
    scores = np.round(rng.random(200) * 4, 1)  # many ties: the id order decides
    scores[0] = scores[50] = 5.0  # the identical ids at the top: kept by the truncation, then dropped
    lazy = Run.from_arrays(qids, offsets, codes, scores, _column(ids, rng), vocab_rank=rank, vocab_order=order)
    plain = Run.from_arrays(qids, offsets, codes, scores, object_array(ids), vocab_rank=rank)
    return lazy, plain, ids


@needs_native
@pytest.mark.parametrize("seed", range(3))
def test_a_run_over_an_id_column_is_the_run_over_its_ids(seed, tmp_path):
    from harness.evaluation import DEFAULT_FAMILIES, Evaluator, metrics_for
    from harness.formats.trec import write_run
    from harness.qrels import Qrels

    lazy, plain, ids = _pair(seed)
    column = lazy.vocab_source
    probes = ids[::97] + ["absent", "", "\ud800"]
    assert lazy.codes_of(probes).tolist() == plain.codes_of(probes).tolist()
    derived = lazy.canonical().truncated(60).without_identical_ids().with_scores(lazy.canonical().truncated(60)
                                                                                  .without_identical_ids().scores)
    reference = plain.canonical().truncated(60).without_identical_ids()
    assert derived.vocab_source is column and derived._rank_view is lazy._rank_view
    assert np.array_equal(derived.doc_codes, reference.doc_codes) and np.array_equal(derived.offsets, reference.offsets)
    assert len(derived) == 50 + 60 + 60 - 2  # queries 3 and 4 cut to 60, two identical ids dropped
    joined = concat_runs([derived, derived._replace(query_ids=object_array(["x", "y", "z", "w"]))])
    assert joined.vocab_source is column and joined.n_vocab == len(ids)
    rng = np.random.default_rng(seed)
    qrels = Qrels.from_rows([(q, d, int(g)) for q in ["q1", "q3", ids[5]] for d, g in
                             zip(rng.choice(ids, 40, replace=False).tolist(), rng.integers(0, 3, 40))])
    names = metrics_for(DEFAULT_FAMILIES, (1, 10, 100))
    got, want = Evaluator(names).evaluate(derived, qrels), Evaluator(names).evaluate(reference, qrels)
    for name, values in want.values.items():
        assert np.array_equal(got.values[name], values), name
    write_run(derived, tmp_path / "lazy.trec", tag="t")
    write_run(reference, tmp_path / "plain.trec", tag="t")
    assert (tmp_path / "lazy.trec").read_bytes() == (tmp_path / "plain.trec").read_bytes()
    assert column._objects is None, "the ids were made as Python strings"
    # a reader that asks for doc_vocab gets the object array (made once), and the run stays lazy
    assert derived.doc_vocab.tolist() == ids and derived.doc_vocab is column.objects()
    assert derived.to_dict() == reference.to_dict()
    back = pickle.loads(pickle.dumps(derived))
    assert isinstance(back.vocab_source, IdColumn) and back.to_dict() == reference.to_dict()


def test_without_the_compiled_module_an_id_column_run_reads_its_ids(monkeypatch, tmp_path):
    """HARNESS_TREC_COMPILED=0: codes_of and the writer fall back to the object array, same results."""
    from harness.formats.trec import write_run

    monkeypatch.setenv("HARNESS_TREC_COMPILED", "0")
    lazy, plain, ids = _pair(7, 400)
    probes = ids[::13] + ["absent"]
    assert lazy.codes_of(probes).tolist() == plain.codes_of(probes).tolist()
    write_run(lazy.canonical(), tmp_path / "lazy.trec", tag="t")
    write_run(plain.canonical(), tmp_path / "plain.trec", tag="t")
    assert (tmp_path / "lazy.trec").read_bytes() == (tmp_path / "plain.trec").read_bytes()


def test_id_column_objects_and_refusals():
    column = IdColumn(pa.chunked_array([pa.array(["b", "a"]), pa.array(["c"])]))
    assert len(column) == 3 and column.objects().tolist() == ["b", "a", "c"] and column.objects() is column.objects()
    made = object_array(["b", "a", "c"])
    assert IdColumn(pa.array(["b", "a", "c"]), lambda: made).objects() is made
    with pytest.raises(ValueError, match="another number"):
        IdColumn(pa.array(["b"]), lambda: made).objects()
    with pytest.raises(TypeError):
        IdColumn(pa.array([1, 2]))
    with pytest.raises(TypeError):
        IdColumn(pa.array(["a", None]))


def test_bm25_run_on_scifact_makes_no_id_strings(tmp_path):
    """The bundled SciFact through run_experiment (compiled BM25): the run's vocabulary is the
    corpus's id column, the evaluation, run file and reports never make the 5,183 id strings, and the
    scores are the published gate's (NDCG@10 0.6789, Recall@100 0.9253: the README and .ci/run)."""
    from harness.cli.options import build_evaluator
    from harness.datasets import load_dataset
    from harness.experiment import run_experiment
    from retrievers import create

    if not native.available():
        pytest.skip("harness._trecrun is not built")
    dataset = load_dataset("scifact")
    evaluator, ks = build_evaluator("10,100", None, 1.0, False)
    exp = run_experiment(dataset, create("bm25", cache=False), evaluator, ks, depth=100, output_dir=tmp_path)
    assert exp.run.vocab_source is dataset.corpus.id_column
    assert "id_array" not in dataset.corpus.__dict__ and "ids" not in dataset.corpus.__dict__
    means = exp.result.means
    assert round(means["NDCG@10"], 4) == 0.6789 and round(means["Recall@100"], 4) == 0.9253
    lines = (tmp_path / "run.trec").read_text().splitlines()
    first = next(line for line in lines if not line.startswith("#"))
    assert first.split()[1:4:2] == ["Q0", "1"] and first.split()[2] in set(dataset.corpus.ids)
