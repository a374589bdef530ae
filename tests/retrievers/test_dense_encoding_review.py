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


def test_parts_of_a_concurrent_builder_with_another_chunk_size_are_not_taken_for_its_own(tmp_path):
    """Two processes fill the same entry with different chunk sizes (say a bench cell at 4 and an
    ad-hoc run at 2). 6 rows, longest first = [5, 4, 3, 2, 1, 0]: A's chunks are [5, 4, 3, 2] and
    [1, 0]; B's are [5, 4], [3, 2], [1, 0]. B restarts the entry (meta.json names chunk size 4) and,
    while B encodes its chunk 0, A finishes its chunk 1 (rows [1, 0], 2 rows). Expected: B's matrix
    is row r = [r, -r] for every r (input order). Part files were named by chunk number only and
    checked by row count, so B took A's part 1 (rows 1, 0) for its own chunk 1 (rows 3, 2): rows 3
    and 2 came out as [1, -1] and [0, 0], and that wrong matrix became the complete entry (seen end
    to end with two DenseRetriever processes, cache_chunk_size 4 and 2)."""
    import numpy as np

    from retrievers.dense.cache import EmbeddingCache

    n = 6
    order = np.arange(n)[::-1].copy()
    encode = lambda rows: np.stack([rows, -rows], 1).astype(np.float32)  # noqa: E731
    a = EmbeddingCache(tmp_path / "entry", n, order, 4, {})
    b = EmbeddingCache(tmp_path / "entry", n, order, 2, {})
    a.prepare()
    a.write_part(0, encode(a.chunk_rows(0)))

    def encode_b(rows):
        if 5 in rows:  # B's chunk 0: meanwhile A writes its chunk 1
            a.write_part(1, encode(a.chunk_rows(1)))
        return encode(rows)

    out, _ = b.build(encode_b)
    expected = np.stack([np.arange(n), -np.arange(n)], 1).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(out), expected)
    np.testing.assert_array_equal(np.asarray(b.load_complete()), expected)


def test_an_empty_corpus_gives_every_query_an_empty_ranking(tmp_path):
    """An empty corpus (possible through the API; dataset loaders refuse one) is encoded as a (0, 0)
    matrix. Expected: each query is in the run with no documents, as the sparse and BM25 retrievers
    answer and as exact_search answers for no documents. It used to fail with "query and document
    embeddings disagree: (2, 16) vs (0, 0)"."""
    import json

    from harness.datasets.corpus import Corpus, Queries
    from retrievers.dense import DenseRetriever
    from tests.retrievers.test_dense_retriever import FakeModel

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    for cache in (True, False):
        r = DenseRetriever(model=FakeModel(folder), cache=cache, cache_dir=str(tmp_path / "cache"), progress=False)
        r.index(Corpus([], [], []))
        assert r.search(Queries(["q1", "q2"], ["apples", "cherries"]), 10).to_dict() == {"q1": {}, "q2": {}}
