"""Encoder.encode(columns=True) takes a column as a list of (offsets, data) pieces, read one after the other
(the chunks of a chunked Arrow array, as corpus_columns gives a slice spanning record batches): the same
terms per text, postings and vocabulary as the column in one piece, whatever the pieces' cuts (titles cut
elsewhere than texts, empty pieces, sliced chunks, large_string)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from retrievers.bm25.analyzer import Analyzer
from tests.retrievers.bm25_c import _NON_ASCII, compiled, needs_extension, random_text, raw_encoder


def _texts(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    texts, titles = [], []
    for i in range(n):
        words = random_text(rng).split(" ")
        if i % 7 == 0:
            words.insert(rng.randint(0, len(words)), rng.choice(_NON_ASCII) + rng.choice(["", "'s", "x"]))
        texts.append("".join(c for c in " ".join(words) if not 0xD800 <= ord(c) <= 0xDFFF))
        titles.append("" if i % 5 == 0 else rng.choice(["café’s α-helix", "The cells", random_text(rng)[:40]]))
    return texts, titles


def _chunked(values: list[str], cuts: list[int], kind):
    """``values`` as a chunked array cut at ``cuts``, each chunk a slice of a larger array (offset != 0)."""
    import pyarrow as pa

    bounds = [0, *cuts, len(values)]
    assert bounds == sorted(bounds)
    chunks = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        padded = pa.array(["pad"] * 3 + values[a:b] + ["pad"], kind)
        chunks.append(padded[3:3 + (b - a)])
    return pa.chunked_array(chunks, kind)


def _encode(texts, titles, n_threads: int, postings: bool = True):
    encoder = raw_encoder(Analyzer())
    out = [encoder.encode(texts, n_threads, 0, postings, titles=titles, columns=True) for _ in range(2)]
    return [[np.frombuffer(b, dtype=np.uint8).tobytes() for b in o] for o in out], encoder.terms(0)


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_pieces_encode_as_one_column(n_threads):
    import pyarrow as pa

    texts, titles = _texts(600, 27)
    for kind in (pa.string(), pa.large_string()):
        whole = _encode(compiled.arrow_column(pa.array(texts, kind)), compiled.arrow_column(pa.array(titles, kind)),
                        n_threads)
        assert len(whole[1]) > 500 and any(not t.isascii() for t in whole[1])
        chunked_texts = _chunked(texts, [1, 1, 250, 599], kind)  # (an empty chunk between the two cuts at 1)
        chunked_titles = _chunked(titles, [100, 101, 480], kind)  # cut elsewhere than the texts
        text_pieces, title_pieces = compiled.arrow_column(chunked_texts), compiled.arrow_column(chunked_titles)
        assert isinstance(text_pieces, list) and len(text_pieces) == 5 and len(title_pieces) == 4
        assert _encode(text_pieces, title_pieces, n_threads) == whole
        no_titles = _encode(compiled.arrow_column(pa.array(texts, kind)), None, n_threads)
        assert _encode(text_pieces, None, n_threads) == no_titles != whole


@needs_extension
def test_pieces_through_encode_into_give_the_same_postings():
    """CompiledTermEncoder.encode_into with chunked arrays (how the BM25 build reads a slice spanning
    batches) fills a PostingsBuilder as the same texts in one array do."""
    import pyarrow as pa

    texts, titles = _texts(400, 5)
    results = []
    for make in (lambda v: pa.array(v), lambda v: _chunked(v, [37, 38, 150], pa.string())):
        encoder = compiled.CompiledTermEncoder(Analyzer(), n_threads=2)
        postings = compiled.index_postings(encoder, [(make(titles[:200]), make(texts[:200])),
                                                     (make(titles[200:]), make(texts[200:]))])
        results.append(([p.tolist() for p in postings], list(encoder.terms)))
    assert results[0] == results[1] and len(results[0][1]) > 500


@needs_extension
def test_bad_pieces_are_refused():
    encoder = raw_encoder(Analyzer())
    data = b"abc def"
    good = (np.array([0, 3], np.int64), data)
    with pytest.raises(TypeError, match="tuple"):
        encoder.encode([good, [np.array([0, 3], np.int64), data]], 1, columns=True)
    with pytest.raises(ValueError, match="non-decreasing"):
        encoder.encode([good, (np.array([4, 3], np.int64), data)], 1, columns=True)
    with pytest.raises(ValueError, match="same length"):  # 2 texts in two pieces, 3 titles
        encoder.encode([good, (np.array([4, 7], np.int64), data)], 1,
                       titles=[(np.array([0, 1, 2], np.int64), data), good], columns=True)
    counts, ids = encoder.encode([good, (np.array([0], np.int64), b""), (np.array([4, 7], np.int64), data)], 1,
                                 columns=True)
    assert np.frombuffer(counts, np.int64).tolist() == [1, 1] and encoder.terms(0) == ["abc", "def"]
    counts, _ = encoder.encode([], 1, columns=True)  # no pieces: no texts
    assert np.frombuffer(counts, np.int64).tolist() == []
