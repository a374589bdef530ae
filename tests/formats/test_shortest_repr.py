"""harness_shortest_repr (harness/native/shortest.cpp): Python's repr of a float without Python's dtoa,
so that the run writer formats scores on threads. The reference is ``repr`` itself, on values chosen
where a layout or a digit string could go wrong, and on ~1M random ones; benchmarks/shortest_repr_check.py
runs the same comparison on hundreds of millions."""

from __future__ import annotations

import numpy as np
import pytest

from harness.formats import native
from harness.run import Run

pytestmark = pytest.mark.skipif(native._built is None, reason="the compiled run writer is not built (no C compiler)")


def _edge_values() -> np.ndarray:
    """Signed zeros, specials, the extremes, every power of 2 and of 10 in range and their float
    neighbours, the notation switches (1e-4 / 1e-5, 1e16 / 1e17) and their neighbours, integers."""
    base = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 5e-324, 2.2250738585072014e-308,
            2.225073858507201e-308, 1.7976931348623157e308, 0.1, 0.2, 0.3, 2e16 + 8, 123456789012345678.0,
            9999999999999998.0, 1e22, 1e23, 0.1 + 0.2]
    base += [2.0 ** e for e in range(-1074, 1024)] + [10.0 ** e for e in range(-323, 309)]
    base += [1e-4, 1e-5, 1e16, 1e17, 1e15, 1e-3, 1.0, 0.5, 2.0, 10.0]
    values = np.array(base, dtype=np.float64)
    with np.errstate(over="ignore"):  # (the neighbours of the largest float are infinite)
        up, down = np.nextafter(values, np.inf), np.nextafter(values, -np.inf)
        values = np.concatenate([values, up, down, np.nextafter(up, np.inf), np.nextafter(down, -np.inf)])
    values = np.concatenate([values, -values, np.arange(-3000, 3000, dtype=np.float64)])
    return values


def _random_values(n: int, seed: int) -> np.ndarray:
    """Widened float32 (random bit patterns; typical BM25 / dense / fusion ranges), random float64 bit
    patterns, uniform doubles."""
    rng = np.random.default_rng(seed)
    with np.errstate(invalid="ignore"):  # (NaN bit patterns among them)
        f32_bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
        f64_bits = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64) * rng.choice([-1.0, 1.0], n)
    bm25 = (rng.random(n) * 60).astype(np.float32).astype(np.float64)
    cosine = (rng.random(n) * 2 - 1).astype(np.float32).astype(np.float64)
    rrf = 1.0 / (60.0 + rng.integers(1, 1000, n)) + 1.0 / (60.0 + rng.integers(1, 1000, n))
    return np.concatenate([f32_bits, f64_bits, bm25, cosine, rrf, rng.random(n) * 10.0 ** rng.integers(-30, 30, n)])


def _expected(values: np.ndarray) -> bytes:
    return "".join(f"{v!r}\n" for v in values.tolist()).encode()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_edge_values_format_as_repr(threads):
    values = _edge_values()
    assert native._built.format_scores(values, threads) == _expected(values)


def test_random_values_format_as_repr():
    values = _random_values(160_000, 20261124)  # ~1M values
    got = native._built.format_scores(values, 2)
    assert got == _expected(values)
    assert got.count(b"e") > 100_000 and got.count(b"nan") > 100  # (both notations and NaN payloads seen)


def test_format_lines_on_threads_gives_the_per_line_bytes():
    """Many distinct scores (formatted on threads from 8,192 on): the same file as one f-string per entry."""
    rng = np.random.default_rng(3)
    n_q, depth = 80, 1000
    scores = np.sort((rng.random(n_q * depth) * 40).astype(np.float32).astype(np.float64).reshape(n_q, depth), axis=1)
    vocab = [f"doc{i}" for i in range(5000)]
    codes = np.concatenate([rng.permutation(5000)[:depth] for _ in range(n_q)]).astype(np.int64)
    run = Run.from_arrays([f"q{i}" for i in range(n_q)], np.arange(0, n_q * depth + 1, depth), codes,
                          scores[:, ::-1].ravel(), vocab)
    assert len(np.unique(run.scores)) > 65_536
    ids, values = run.doc_vocab[run.doc_codes].tolist(), run.scores.tolist()
    expected = "".join(f"q{i} Q0 {ids[p]} {p - i * depth + 1} {values[p]!r} t\n"
                       for i in range(n_q) for p in range(i * depth, (i + 1) * depth)).encode()
    for threads in (1, 2, 4):
        got = native._built.format_lines(run.query_ids.tolist(), run.offsets, run.doc_codes, run.scores,
                                         run.doc_vocab.tolist(), "t", threads)
        assert got == expected
