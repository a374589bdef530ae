"""The TREC run writer, compiled (harness/native/trecrun.c format_lines) and column-wise in Python
(``HARNESS_TREC_COMPILED=0``, or the extension not built): the same bytes as one
``f"{qid} Q0 {doc} {rank} {score!r} {tag}"`` line per entry (the writer's contract, module doc of
harness/formats/trec.py), whatever the blocks."""

from __future__ import annotations

import io

import numpy as np
import pytest

from harness.formats import native, trec
from harness.formats.trec import read_run, write_run, write_run_to
from harness.run import Run

# Scores whose repr is not plain digits: signed zeros, exponents (Python switches at 1e-4 and 1e16),
# whole numbers ("12.0"), float32 values held in float64, infinity.
SCORES = [-0.0, 1e-05, 0.0001, 1e16, 9999999999999998.0, 12.0, 0.1 + 0.2, float(np.float32(17.5255)),
          -2.5, float("inf"), 5e-324]


def _per_line(run: Run, tag: str) -> str:
    """The former writer, one Python f-string per entry: the reference bytes."""
    ids, scores = run.doc_vocab[run.doc_codes].tolist(), run.scores.tolist()
    out = []
    for i, qid in enumerate(run.query_ids.tolist()):
        start, end = int(run.offsets[i]), int(run.offsets[i + 1])
        out.extend(f"{qid} Q0 {ids[p]} {p - start + 1} {scores[p]!r} {tag}\n" for p in range(start, end))
    return "".join(out)


@pytest.fixture(params=["compiled", "python"], autouse=True)
def writer(request, monkeypatch):
    """Every test here runs with each writer."""
    if request.param == "compiled" and native._built is None:
        pytest.skip("the compiled run writer is not built (no C compiler)")
    monkeypatch.setenv(native.SWITCH, "1" if request.param == "compiled" else "0")
    return request.param


def _run() -> Run:
    rng = np.random.default_rng(7)
    results = {"q1": {f"d{i}": s for i, s in enumerate(SCORES)}, "empty": {}, "z": {"a": 0.0, "b": 1.0},
               "qé": {"naïve": 1.0, "β-catenin": 1.0, "doc": 0.5}}
    for q in range(20):  # many queries of uneven depth, with ties
        results[f"r{q}"] = {f"x{j}": float(v) for j, v in enumerate(rng.integers(0, 5, rng.integers(1, 30)) / 4)}
    return Run.from_dict(results).canonical()


def test_written_lines_are_the_per_line_format_with_repr_scores():
    run = _run()
    handle = io.StringIO()
    write_run_to(run, handle, tag="bm25")
    assert handle.getvalue() == _per_line(run, "bm25")
    lines = handle.getvalue().splitlines()
    # Python's repr, by hand: exponents as Python writes them; "-0.0" apart from "0.0" (one block).
    assert lines[:11] == [
        "q1 Q0 d9 1 inf bm25", "q1 Q0 d3 2 1e+16 bm25", "q1 Q0 d4 3 9999999999999998.0 bm25",
        "q1 Q0 d7 4 17.52549934387207 bm25", "q1 Q0 d5 5 12.0 bm25", "q1 Q0 d6 6 0.30000000000000004 bm25",
        "q1 Q0 d2 7 0.0001 bm25", "q1 Q0 d1 8 1e-05 bm25", "q1 Q0 d10 9 5e-324 bm25", "q1 Q0 d0 10 -0.0 bm25",
        "q1 Q0 d8 11 -2.5 bm25"]
    assert lines[11:15] == ["z Q0 b 1 1.0 bm25", "z Q0 a 2 0.0 bm25", "qé Q0 β-catenin 1 1.0 bm25",
                            "qé Q0 naïve 2 1.0 bm25"]


@pytest.mark.parametrize("block", [1, 2, 7, 1 << 20])
def test_blocks_of_queries_give_the_same_file(tmp_path, monkeypatch, block):
    monkeypatch.setattr(trec, "_WRITE_BLOCK", block)
    run = _run()
    write_run(run, tmp_path / "run.trec", tag="sys", header=["# a header", "# more"])
    data = (tmp_path / "run.trec").read_bytes()
    assert data == ("# a header\n# more\n" + _per_line(run, "sys")).encode("utf-8")
    back = read_run(tmp_path / "run.trec")
    assert back.scores.tobytes() == run.scores.tobytes()  # repr round-trips every float, -0.0 included


def test_a_canonical_run_is_checked_once_and_reordered_runs_know_they_are_canonical():
    run = Run.from_dict({"q": {"b": 1.0, "a": 1.0, "c": 2.0}})
    ordered = run.canonical()
    assert ordered.doc_ids(0) == ["c", "b", "a"] and ordered.canonical() is ordered
    assert ordered.truncated(2).canonical().doc_ids(0) == ["c", "b"]
    # New scores may make new ties: that run is checked again (float32 rounding ties 1.0 and 1 + 1e-9).
    rescored = Run.from_dict({"q": {"a": 1.0 + 1e-9, "b": 1.0}}).canonical().with_scores(np.array([1.0, 1.0]))
    assert rescored.canonical().doc_ids(0) == ["b", "a"]


def test_ties_break_on_the_vocabulary_rank_when_a_run_carries_one():
    vocab = np.array(["d10", "d2", "d9"], dtype=object)  # string order: d10 < d2 < d9
    rank = np.array([0, 1, 2])
    run = Run.from_arrays(["q"], [0, 3], [0, 1, 2], [1.0, 1.0, 1.0], vocab, vocab_rank=rank)
    assert run.canonical().doc_ids(0) == ["d9", "d2", "d10"]
    plain = Run.from_arrays(["q"], [0, 3], [0, 1, 2], [1.0, 1.0, 1.0], vocab)
    assert plain.canonical().doc_ids(0) == ["d9", "d2", "d10"]


def _random_run(seed: int, n_docs: int) -> Run:
    """Random ids (ASCII and not), depths and scores: ties, signed zeros, repeats, float32 values, exponents."""
    rng = np.random.default_rng(seed)
    alphabet = list("abcXYZ019-_.é€β𝄞")
    vocab = ["".join(rng.choice(alphabet, rng.integers(1, 12))) + str(i) for i in range(min(n_docs, 500))]
    vocab += [f"{vocab[i % 500]}-{i}" for i in range(500, n_docs)]
    pool = np.concatenate([rng.normal(0, 10, 50), rng.integers(-3, 4, 20).astype(float), [-0.0, 0.0, 1e300, -1e-310],
                           rng.normal(0, 1e20, 10), rng.random(30).astype(np.float32).astype(float), 10.0 ** rng.integers(-8, 20, 10)])
    query_ids, offsets, codes = [], [0], []
    for q in range(int(rng.integers(1, 40))):
        depth = int(rng.integers(0, min(60, n_docs)))
        codes.extend(rng.choice(n_docs, depth, replace=False).tolist())
        query_ids.append(f"q{q}" + ("é" if q % 3 == 0 else ""))
        offsets.append(len(codes))
    scores = rng.choice(pool, len(codes))
    return Run.from_arrays(query_ids, offsets, codes, scores, vocab).canonical()  # the whole vocabulary


@pytest.mark.parametrize("seed", range(12))
def test_randomized_runs_are_written_as_the_per_line_format(seed, tmp_path, monkeypatch):
    """Both the vocabulary-wide and the per-block document lists of the compiled writer (a vocabulary
    larger than the run is sliced per block), in blocks of several sizes."""
    run = _random_run(seed, n_docs=[5, 80, 30000][seed % 3])
    if seed % 3 == 2:
        assert len(run.doc_vocab) > 8 * len(run)  # the compiled writer's per-block ids
    expected = _per_line(run, "run-x").encode("utf-8")
    for block in (1, 37, 1 << 17):
        monkeypatch.setattr(trec, "_WRITE_BLOCK", block)
        write_run(run, tmp_path / "run.trec", tag="run-x")
        assert (tmp_path / "run.trec").read_bytes() == expected


def test_ids_python_cannot_encode_as_utf8_are_refused_before_writing(tmp_path):
    # (they raised Python's UnicodeEncodeError midway, naming no id; tests/formats/test_trec_nul_ids.py)
    run = Run.from_dict({"q": {"bad\udc80": 1.0}})
    with pytest.raises(ValueError, match=r"document id 'bad\\udc80' cannot be written to a TREC file \(holds a lone"):
        write_run(run, tmp_path / "run.trec")
    assert not (tmp_path / "run.trec").exists()


@pytest.mark.parametrize("n_docs", [40, 9000])  # 9,000 entries: more than 8,192, so the lines are made on threads
def test_runs_over_a_corpus_id_column_are_written_as_the_per_line_format(tmp_path, monkeypatch, n_docs):
    """A run whose vocabulary is a corpus's ids (IdColumn: the compiled writer reads them in place from
    the Arrow buffers, format_arrow_lines) gives the per-line bytes, with ids, query ids, scores and tags
    of every length the line assembly copies differently (copy_short: 1-3, 4-7, 8-15, 16-32 and more
    bytes), the last id of the data buffer among them (nothing read past a field)."""
    import pyarrow as pa

    from harness.columns import IdColumn

    rng = np.random.default_rng(n_docs)
    lengths = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64, 200]
    ids = [("é" if i % 5 == 0 else "") + "x" * (lengths[i % len(lengths)] - 1) + str(i) for i in range(n_docs)]
    ids[-1] = "z" * 19  # the data buffer's last bytes
    column = IdColumn(pa.array(["pad"] + ids).slice(1))  # (sliced: offsets that do not start at 0)
    query_ids = ["q" * n for n in lengths] + ["é", "qé" * 20]
    offsets, codes = [0], []
    for q in query_ids:
        codes.extend(rng.choice(n_docs, int(rng.integers(1, max(2, 2 * n_docs // len(query_ids)))), replace=False))
        codes.append(n_docs - 1) if n_docs - 1 not in codes[offsets[-1]:] else None
        offsets.append(len(codes))
    pool = [0.5, 1.0, 12.25, -0.0, 1e-05, 1e16, float(np.float32(17.5255)), 0.1 + 0.2, 5e-324, 123456.78125]
    scores = np.array([pool[int(i)] for i in rng.integers(0, len(pool), len(codes))])
    run = Run.from_arrays(query_ids, offsets, codes, scores, column).canonical()
    assert isinstance(run.vocab_source, IdColumn)
    for tag in ("t", "abc", "tag4", "bm25-run", "a-run-tag-of-22-bytes", "r" * 40):
        expected = _per_line(run, tag).encode("utf-8")
        for block in (7, 1 << 17):
            monkeypatch.setattr(trec, "_WRITE_BLOCK", block)
            write_run(run, tmp_path / "run.trec", tag=tag)
            assert (tmp_path / "run.trec").read_bytes() == expected
