"""Review tests of the dense encoding side: the embedding cache's join (retrievers/dense/cache.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_join_of_more_parts_than_the_open_files_limit(tmp_path):
    """200 rows in chunks of 2 = 100 parts, joined under ``ulimit -n 64``. Expected: the complete
    matrix in input order (row r = [r, -r], written by a plain encoder in longest-first order).
    The join used to keep every part memory-mapped at once (a map holds a file descriptor), so past
    the open-files limit (1024 by default = 524,288 rows at the default chunk size, long before
    MS MARCO) it failed with "cache part ... vanished or changed while joining", on every rerun."""
    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        sys.path.insert(0, {str(REPO)!r})
        from retrievers.dense.cache import EmbeddingCache
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        n = 200
        cache = EmbeddingCache({str(tmp_path / "entry")!r}, n, np.arange(n)[::-1].copy(), 2, {{}})
        out, reused = cache.build(lambda rows: np.stack([rows, -rows], 1).astype(np.float32))
        expected = np.stack([np.arange(n), -np.arange(n)], 1).astype(np.float32)
        assert reused == 0 and np.array_equal(np.asarray(out), expected)
        assert sorted(p.name for p in cache.folder.iterdir()) == ["embeddings.npy", "meta.json"]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_concurrent_builder_that_joined_first_is_not_an_error(tmp_path):
    """Two processes fill the same entry (e.g. two bench cells on Ray sharing the document
    embeddings): B encodes chunks 0..2; while B encodes its last chunk, A finds B's parts, encodes
    the rest, joins and removes the parts. B's join then finds no parts. Expected: B returns the
    complete matrix A wrote (identical rows: row r = [r, -r]), not "cache part ... vanished"."""
    import numpy as np

    from retrievers.dense.cache import EmbeddingCache

    n, chunk = 8, 2
    order = np.arange(n)[::-1].copy()
    encode = lambda rows: np.stack([rows, -rows], 1).astype(np.float32)  # noqa: E731
    a = EmbeddingCache(tmp_path / "entry", n, order, chunk, {})
    b = EmbeddingCache(tmp_path / "entry", n, order, chunk, {})

    def encode_b(rows):
        if 0 in rows:  # B's last chunk (longest-first order reversed: row 0 comes last)
            a.build(encode)
        return encode(rows)

    out, _ = b.build(encode_b)
    expected = np.stack([np.arange(n), -np.arange(n)], 1).astype(np.float32)
    assert np.array_equal(np.asarray(out), expected)
    assert np.array_equal(np.asarray(a.load_complete()), expected)
    assert sorted(p.name for p in (tmp_path / "entry").iterdir()) == ["embeddings.npy", "meta.json"]
