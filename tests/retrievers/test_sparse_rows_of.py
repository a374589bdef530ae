"""retrievers.sparse.encoder.rows_of on a dense (n_rows, dim) output, against a row-by-row reading of it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from retrievers.sparse.encoder import rows_of  # noqa: E402


def by_row(dense: np.ndarray):
    """(counts, terms, weights) read row by row: each row's nonzero columns ascending, with their values."""
    counts, terms, weights = [], [], []
    for row in dense:
        cols = [c for c in range(len(row)) if row[c] != 0]
        counts.append(len(cols))
        terms += cols
        weights += [row[c] for c in cols]
    return counts, terms, weights


@pytest.mark.parametrize("as_tensor", [True, False])
def test_dense_rows_keep_each_rows_nonzero_terms_in_order(as_tensor):
    rng = np.random.default_rng(7)
    dense = rng.standard_normal((6, 50)).astype(np.float32)
    dense[rng.random(dense.shape) < 0.8] = 0.0
    dense[2] = 0.0  # a row with no term
    dense[4, -1] = -0.5  # a negative weight in the last column
    rows = rows_of(torch.from_numpy(dense) if as_tensor else dense, 6)
    counts, terms, weights = by_row(dense)
    assert rows.lengths.tolist() == counts and counts[2] == 0
    assert rows.term_ids.tolist() == terms and rows.term_ids.dtype == np.int32
    assert rows.weights.tolist() == pytest.approx(weights, abs=0) and rows.weights.dtype == np.float32


def test_sparse_tensor_gives_the_same_rows_as_its_dense_form():
    dense = torch.tensor([[0.0, 1.5, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.25, 0.0]])
    a, b = rows_of(dense, 3), rows_of(dense.to_sparse(), 3)
    assert a.lengths.tolist() == b.lengths.tolist() == [2, 0, 2]
    assert a.term_ids.tolist() == b.term_ids.tolist() == [1, 3, 0, 2]
    assert a.weights.tolist() == b.weights.tolist() == [1.5, 2.0, 3.0, 0.25]


def test_a_dense_output_of_another_shape_is_refused():
    with pytest.raises(ValueError, match=r"expected 3 rows of term weights, got an array of shape \(2, 4\)"):
        rows_of(np.zeros((2, 4), np.float32), 3)
