"""Second interruption review of the embedding cache (retrievers/dense/cache.py): a part whose .npy
header is damaged is encoded again, not a crash."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.dense.cache import EmbeddingCache

N = 10
ORDER = np.arange(N)[::-1].copy()  # an encoding order (e.g. longest text first)


def rows(indices: np.ndarray) -> np.ndarray:
    """Embedding of row i = [i, 2i]."""
    return np.outer(indices, [1.0, 2.0]).astype(np.float32)


@pytest.mark.parametrize("old, new", [(b"}", b"|"), (b"(", b"[")])
def test_a_part_with_a_damaged_header_is_encoded_again(tmp_path, old, new):
    """One damaged byte in a part's .npy header (found by a random bit-flip fuzz: 15 of 800
    damaged parts), e.g. its closing brace, made numpy's header parser raise tokenize.TokenError
    ('EOF in multi-line statement'), which the part loader did not catch: the resumed build crashed
    instead of encoding the part again. Expected: the build returns rows [i, 2i] for i = 0..9
    (in input order), reusing part 0 only."""
    cache = EmbeddingCache(tmp_path / "entry", N, ORDER, 4, {"kind": "t"})

    def interrupted(indices):
        if len(list(cache.folder.glob("part-*.npy"))) == 2:
            raise KeyboardInterrupt
        return rows(indices)

    with pytest.raises(KeyboardInterrupt):
        cache.build(interrupted)
    part = cache.folder / "part-4-000001.npy"
    data = part.read_bytes()
    header_end = data.index(b"\n")
    position = data.index(old)
    assert position < header_end
    part.write_bytes(data[:position] + new + data[position + 1:])
    out, reused = EmbeddingCache(tmp_path / "entry", N, ORDER, 4, {"kind": "t"}).build(rows)
    assert reused == 4
    np.testing.assert_array_equal(out, rows(np.arange(N)))


def test_a_build_whose_parts_another_chunk_size_removed_still_finishes(tmp_path):
    """Two processes fill one entry with different cache_chunk_size at once (e.g. two dense
    retrievers of one model in a benchmark on Ray). The second one's prepare() restarts the entry
    (documented), removing the first one's finished parts; the first one then died at its join with
    'ValueError: cache part .../part-4-000000.npy vanished or changed while joining'. Expected: both
    builds return rows [i, 2i] for i = 0..11, and the entry then loads complete."""
    n, order = 12, np.arange(12)
    a = EmbeddingCache(tmp_path / "entry", n, order, 4, {"kind": "t"})
    b = EmbeddingCache(tmp_path / "entry", n, order, 6, {"kind": "t"})
    calls = []

    def encode_a(indices):
        calls.append(len(indices))
        if len(calls) == 2:
            b.prepare()  # the other process starts while this one encodes its second chunk
        return rows(indices)

    out_a, _ = a.build(encode_a)
    np.testing.assert_array_equal(out_a, rows(np.arange(n)))
    out_b, _ = b.build(rows)
    np.testing.assert_array_equal(out_b, rows(np.arange(n)))
    np.testing.assert_array_equal(EmbeddingCache(tmp_path / "entry", n, order, 4, {"kind": "t"}).load_complete(),
                                  rows(np.arange(n)))
