"""The compiled postings builder and Lucene scoring (native/postings.c, native/scoring.c)."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.build import postings_from_chunks
from tests.retrievers.bm25_c import compiled, compiled_on, needs_extension, scifact  # noqa: F401
from tests.retrievers.bm25_c import finish as _finish, raw_encoder


@needs_extension
def test_postings_builder_chunks_and_reference():
    rng = np.random.default_rng(7)
    n_terms = 300
    lengths = rng.integers(0, 40, size=500).astype(np.int64)
    lengths[[0, 17, 499]] = 0  # empty documents, at the start and the end too
    ids = (rng.zipf(1.5, size=int(lengths.sum())) % n_terms).astype(np.int32)
    one = loader.built_module().PostingsBuilder()
    one.add(lengths, ids)
    whole = _finish(one, n_terms + 5)  # terms without postings at the end
    cuts = [0, 1, 2, 100, 101, 350, 500]
    builder = loader.built_module().PostingsBuilder()
    chunks = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        s, e = int(lengths[:a].sum()), int(lengths[:b].sum())
        chunks.append((lengths[a:b], ids[s:e]))
        builder.add(lengths[a:b], ids[s:e])
    builder.add(np.zeros(0, np.int64), np.zeros(0, np.int32))  # an empty chunk
    parts = _finish(builder, n_terms + 5)
    for w, p in zip(whole, parts):
        np.testing.assert_array_equal(w, p)
    # the glue, and the Python reference (np.unique per chunk, sorted by term then document)
    glue = compiled.build_postings(iter(chunks), lambda: n_terms + 5)
    for w, g in zip(whole, glue):
        np.testing.assert_array_equal(w, g)
    term = np.concatenate([t for _, t, _, _ in postings_from_chunks(chunks)])
    doc = np.concatenate([d for _, _, d, _ in postings_from_chunks(chunks)])
    tf = np.concatenate([f for _, _, _, f in postings_from_chunks(chunks)])
    order = np.lexsort((doc, term))
    indptr, indices, tfs, doc_lengths = whole
    assert indptr.tolist() == np.concatenate([[0], np.cumsum(np.bincount(term, minlength=n_terms + 5))]).tolist()
    assert indices.tolist() == doc[order].tolist() and tfs.tolist() == tf[order].tolist()
    assert doc_lengths.tolist() == lengths.tolist() and int(tfs.sum()) == len(ids)
    # a finished builder starts again empty
    again = _finish(builder, 2)
    assert again[0].tolist() == [0, 0, 0] and [len(a) for a in again[1:]] == [0, 0, 0]


@needs_extension
def test_postings_builder_rejects_bad_input():
    b = loader.built_module().PostingsBuilder()
    with pytest.raises(ValueError, match="add up"):
        b.add(np.array([2, 2], np.int64), np.array([0, 1, 2], np.int32))  # 4 counted, 3 given
    b = loader.built_module().PostingsBuilder()
    with pytest.raises(ValueError, match="add up"):
        b.add(np.array([1], np.int64), np.array([0, 1], np.int32))  # 1 counted, 2 given
    b = loader.built_module().PostingsBuilder()
    with pytest.raises(ValueError):
        b.add(np.array([-1, 2], np.int64), np.array([0], np.int32))
    b = loader.built_module().PostingsBuilder()
    with pytest.raises(ValueError, match="negative"):
        b.add(np.array([1], np.int64), np.array([-3], np.int32))
    b = loader.built_module().PostingsBuilder()
    with pytest.raises(ValueError, match="whole number"):
        b.add(np.array([1], np.int32), np.array([0], np.int32))  # counts are int64
    b = loader.built_module().PostingsBuilder()
    b.add(np.array([3], np.int64), np.array([0, 4, 4], np.int32))
    with pytest.raises(ValueError, match="n_terms"):
        b.finish(4)  # term id 4 >= n_terms 4
    with pytest.raises(ValueError, match="n_terms"):
        b.finish(4, 3)
    indptr, indices, tf, lengths = _finish(b, 5)  # the builder is intact after the refusal
    assert indptr.tolist() == [0, 1, 1, 1, 1, 2] and indices.tolist() == [0, 0] and tf.tolist() == [1, 2]
    assert lengths.tolist() == [3]


@needs_extension
def test_postings_builder_refused_input_adds_nothing():
    b = loader.built_module().PostingsBuilder()
    b.add(np.array([2], np.int64), np.array([1, 1], np.int32))
    with pytest.raises(ValueError, match="add up"):
        b.add(np.array([1, -1, 0], np.int64), np.array([0], np.int32))  # a bad count after a good one
    with pytest.raises(ValueError, match="negative"):
        b.add(np.array([1, 1], np.int64), np.array([0, -1], np.int32))  # a bad id after a good one
    with pytest.raises(ValueError, match="n_terms must be >= 0"):
        b.finish(-1)
    indptr, indices, tf, lengths = _finish(b, 2)
    assert indptr.tolist() == [0, 0, 1] and indices.tolist() == [0] and tf.tolist() == [2]
    assert lengths.tolist() == [2]


@needs_extension
def test_postings_builder_add_postings_equals_add_and_refuses_bad_postings():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 30, size=200).astype(np.int64)
    ids = (rng.zipf(1.5, size=int(lengths.sum())) % 50).astype(np.int32)
    pcounts, terms, tfs, pos = [], [], [], 0
    for n in lengths.tolist():  # each document's distinct terms, first appearance first, with counts
        doc = ids[pos:pos + n].tolist()
        pos += n
        seen = {t: doc.count(t) for t in dict.fromkeys(doc)}
        pcounts.append(len(seen))
        terms += list(seen)
        tfs += list(seen.values())
    args = (lengths, np.array(pcounts, np.int64), np.array(terms, np.int32), np.array(tfs, np.int32))
    a, b = loader.built_module().PostingsBuilder(), loader.built_module().PostingsBuilder()
    a.add(lengths, ids)
    b.add_postings(*args)
    b.add_postings(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32))
    for x, y in zip(_finish(a, 50), _finish(b, 50)):
        np.testing.assert_array_equal(x, y)
    one = lambda *v: tuple(np.array(x, t) for x, t in zip(v, (np.int64, np.int64, np.int32, np.int32)))  # noqa: E731
    b = loader.built_module().PostingsBuilder()
    b.add_postings(*one([3], [2], [0, 1], [2, 1]))
    bad = [(one([3], [2], [0, 0], [2, 1]), "repeats"),          # a term twice in one document
           (one([3], [2], [0, -1], [2, 1]), "negative"),
           (one([3], [2], [0, 1], [3, 0]), "tf < 1"),
           (one([3], [2], [0, 1], [1, 1]), "add up to its count"),  # tfs 2, count 3
           (one([3, 1], [2], [0, 1], [2, 1]), "equal lengths"),
           (one([3], [3], [0, 1], [2, 1]), "add up"),            # 3 postings counted, 2 given
           (one([1, 3], [1, 2], [0, 0, 1], [1, 2, 1]), None)]   # fine: the same term in two documents
    for args, message in bad:
        if message is None:
            b.add_postings(*args)
        else:
            with pytest.raises(ValueError, match=message):
                b.add_postings(*args)
    indptr, indices, tf, doc_lengths = _finish(b, 2)  # refused calls added nothing
    # term 0 in documents 0, 1, 2 (tf 2, 1, 2); term 1 in documents 0, 2 (tf 1, 1)
    assert indptr.tolist() == [0, 3, 5] and indices.tolist() == [0, 1, 2, 0, 2] and tf.tolist() == [2, 1, 2, 1, 1]
    assert doc_lengths.tolist() == [3, 1, 3]


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 3])
def test_score_lucene_equals_the_numpy_float32_expression(n_threads):
    rng = np.random.default_rng(9)
    n_terms, n_docs = 2000, 3000
    df = rng.integers(0, 80, size=n_terms)
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)  # 80k postings: several threads
    indices = rng.integers(0, n_docs, size=int(indptr[-1])).astype(np.int32)
    tf = rng.integers(1, 40, size=len(indices)).astype(np.int32)
    idf32 = rng.uniform(0.01, 9, size=n_terms).astype(np.float32)
    inv = rng.uniform(0.2, 3, size=n_docs).astype(np.float32)
    got = compiled.score_lucene(indptr, indices, tf, idf32, inv, n_threads)
    w = idf32[np.repeat(np.arange(n_terms), df)]
    np.testing.assert_array_equal(got, w - w / (np.float32(1) + tf.astype(np.float32) * inv[indices]))
    bad_doc = indices.copy()
    bad_doc[-1] = n_docs
    with pytest.raises(ValueError, match="out of range"):
        compiled.score_lucene(indptr, bad_doc, tf, idf32, inv, n_threads)
    bad_ptr = indptr.copy()
    bad_ptr[n_terms // 2] = 10**12  # ascending up to there, past the postings' end
    with pytest.raises(ValueError, match="ascending"):
        compiled.score_lucene(bad_ptr, indices, tf, idf32, inv, n_threads)
    with pytest.raises(ValueError, match="fit together"):
        compiled.score_lucene(indptr, indices, tf[:-1], idf32, inv, n_threads)
    # in place: the scores written over tf's own memory, the same values bit for bit
    own = tf.copy()
    in_place = compiled.score_lucene(indptr, indices, own, idf32, inv, n_threads, in_place=True)
    assert np.shares_memory(in_place, own) and in_place.tobytes() == got.tobytes()
    frozen = tf.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        compiled.score_lucene(indptr, indices, frozen, idf32, inv, n_threads, in_place=True)
    with pytest.raises(ValueError, match="writable"):  # (a copy would be scored, not tf)
        compiled.score_lucene(indptr, indices, tf.astype(np.int64), idf32, inv, n_threads, in_place=True)



@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_titles_read_as_title_space_text_and_postings_match_ids(scifact, n_threads):
    """encode(texts, titles=...) equals encode of Corpus.contents() (title + " " + text, stripped),
    and postings=True gives each text's distinct terms in first-appearance order with their counts."""
    corpus = scifact.corpus
    titles, texts = list(corpus.titles[:1500]) + ["", "  ", "α title"], list(corpus.texts[:1500]) + ["text", "x", "β"]
    joined = [f"{t} {x}".strip() if t else x for t, x in zip(titles, texts)]
    a, b = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    kw = dict(n_threads=n_threads, parallel_min_bytes=0)
    counts, ids = a.encode(joined, **kw)
    counts2, pcounts, pterms, tfs = b.encode(texts, titles=titles, postings=True, **kw)
    assert a.terms() == b.terms() and counts == counts2
    counts, ids = np.frombuffer(counts, np.int64), np.frombuffer(ids, np.int32)
    pcounts, pterms, tfs = (np.frombuffer(x, t) for x, t in ((pcounts, np.int64), (pterms, np.int32), (tfs, np.int32)))
    starts, pstarts = np.cumsum(counts) - counts, np.cumsum(pcounts) - pcounts
    for d in range(len(texts)):
        doc = ids[starts[d]:starts[d] + counts[d]].tolist()
        expected = {t: doc.count(t) for t in dict.fromkeys(doc)}
        got = dict(zip(pterms[pstarts[d]:pstarts[d] + pcounts[d]].tolist(), tfs[pstarts[d]:pstarts[d] + pcounts[d]].tolist()))
        assert list(got) == list(expected) and got == expected
    with pytest.raises(ValueError, match="same length"):
        b.encode(texts, titles=titles[:-1])
    # into=builder appends the same postings to a PostingsBuilder as add(ids) does (two chunks)
    c, r = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    into, ref = loader.built_module().PostingsBuilder(), loader.built_module().PostingsBuilder()
    for part in (slice(0, 700), slice(700, None)):
        assert c.encode(texts[part], titles=titles[part], into=into, **kw) is None
        ref.add(*r.encode(joined[part], **kw))
    assert c.terms() == r.terms()
    for x, y in zip(_finish(ref, len(r.terms())), _finish(into, len(r.terms()))):
        np.testing.assert_array_equal(x, y)
    # mixed in one builder: add(ids), then into=, then add_postings, then into= again
    c, r = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    mixed, ref = loader.built_module().PostingsBuilder(), loader.built_module().PostingsBuilder()
    for i, part in enumerate((slice(0, 300), slice(300, 900), slice(900, 1200), slice(1200, None))):
        ref.add(*r.encode(joined[part], **kw))
        if i == 0:
            mixed.add(*c.encode(joined[part], **kw))
        elif i == 2:
            mixed.add_postings(*c.encode(texts[part], titles=titles[part], postings=True, **kw))
        else:
            c.encode(texts[part], titles=titles[part], into=mixed, **kw)
    assert c.terms() == r.terms()
    # finish on threads: runs of the builder's segments (here up to 2 + 2 + 1) counted and scattered apart
    for x, y in zip(_finish(ref, len(r.terms())), _finish(mixed, len(r.terms()), n_threads=n_threads + 1)):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="PostingsBuilder"):
        c.encode(texts, into=[])




def _random_builder(seed: int, n_threads_docs: int = 400):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 30, size=n_threads_docs).astype(np.int64)
    ids = (rng.zipf(1.5, size=int(lengths.sum())) % 200).astype(np.int32)
    builder = loader.built_module().PostingsBuilder()
    for start in range(0, len(lengths), 97):  # several segments, so that 3 threads share them
        s, e = int(lengths[:start].sum()), int(lengths[:start + 97].sum())
        builder.add(lengths[start:start + 97], ids[s:e])
    return builder


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 3])
def test_finish_fills_the_buffers_allocate_gives(n_threads):
    """finish(..., allocate): the postings go into the caller's buffers (here numpy arrays, as the
    index cache's mapped files are), which finish returns as indices and tf; the same values as
    finish's own bytes."""
    own = [np.frombuffer(b, t) for b, t in zip(_random_builder(3).finish(210, n_threads),
                                                 (np.int64, np.int32, np.int32, np.int32))]
    builder = _random_builder(3)
    asked = []

    def allocate(n):
        asked.append(n)
        return np.full(n, -7, np.int32), np.full(n, -7, np.float32).view(np.int32)

    indptr, indices, tf, lengths = builder.finish(210, n_threads, allocate)
    assert asked == [len(own[1])] and len(own[1]) > 2000 and isinstance(indices, np.ndarray) and isinstance(tf, np.ndarray)
    for want, got in zip(own, (np.frombuffer(indptr, np.int64), indices, tf, np.frombuffer(lengths, np.int32))):
        np.testing.assert_array_equal(got, want)


@needs_extension
@pytest.mark.parametrize("bad, error, match", [
    (lambda n: [np.zeros(n, np.int32)] * 2, TypeError, "tuple"),
    (lambda n: (np.zeros(n + 1, np.int32), np.zeros(n, np.int32)), ValueError, "bytes for"),
    (lambda n: (np.zeros(n, np.int32), np.zeros(2 * n, np.int32)[::2]), ValueError, "contiguous"),
    (lambda n: (np.zeros(n, np.int32), np.frombuffer(bytes(4 * n), np.int32)), ValueError, "read-only"),
    (lambda n: (lambda a: (a, a))(np.zeros(n, np.int32)), ValueError, "overlapping"),
    (lambda n: 1 / 0, ZeroDivisionError, None),
])
def test_finish_refuses_what_allocate_gives_and_stays_whole(bad, error, match):
    """A refused allocate (its own error, or buffers of the wrong kind) leaves the builder whole: a
    later finish gives the postings."""
    want = [np.frombuffer(b, t) for b, t in zip(_random_builder(5).finish(210), (np.int64, np.int32, np.int32, np.int32))]
    builder = _random_builder(5)
    with pytest.raises(error, match=match):
        builder.finish(210, 1, bad)
    for w, g in zip(want, _finish(builder, 210)):
        np.testing.assert_array_equal(g, w)


@needs_extension
def test_finish_refuses_an_allocate_that_adds_to_the_builder():
    """The buffers are sized for the postings at the call: an allocate that adds a document to the
    same builder made the scatter write past them (heap damage); now finish refuses it, and the
    builder, with the added document, still finishes."""
    builder = loader.built_module().PostingsBuilder()
    builder.add(np.array([200], np.int64), np.arange(200, dtype=np.int32))

    def allocate(n):
        builder.add(np.array([1000], np.int64), np.arange(1000, dtype=np.int32) % 200)
        return np.zeros(n, np.int32), np.zeros(n, np.int32)

    with pytest.raises(RuntimeError, match="changed the builder"):
        builder.finish(200, 1, allocate)
    indptr, indices, tf, lengths = _finish(builder, 200)
    assert lengths.tolist() == [200, 1000] and int(tf.sum()) == 1200 and indptr[-1] == len(indices) == 400


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 2])
def test_postings_of_repeated_calls_on_the_same_texts(n_threads):
    """The parallel encoder keeps its parts' per-term marks (which text a term was last seen in) from call to
    call, numbering each call's texts after the last call's: the same 40 texts encoded 6 times into one builder
    (every term at the same text number of each call) give 6 copies of their postings, those add(ids) gives,
    and a longer call after them (the marks grown with new terms) too."""
    texts = [" ".join(f"w{(i * 7 + j * j) % 23}" for j in range(i % 9 + 2)) for i in range(40)]
    more = texts + [f"new{i} w{i % 23} new{i}" for i in range(60)]
    c, r = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    into, ref = loader.built_module().PostingsBuilder(), loader.built_module().PostingsBuilder()
    kw = dict(n_threads=n_threads, parallel_min_bytes=0)
    for chunk in [texts] * 6 + [more]:
        assert c.encode(chunk, into=into, **kw) is None
        ref.add(*r.encode(chunk, **kw))
    assert c.terms() == r.terms() and len(r.terms()) == 23 + 60
    got, want = _finish(into, len(c.terms())), _finish(ref, len(r.terms()))
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    indptr, indices, tf = got[0], got[1], got[2]
    w0 = c.terms().index("w0")
    holding = [sum("w0" in t.split() for t in chunk) for chunk in [texts] * 6 + [more]]
    assert holding == [12] * 6 + [15] and indptr[w0 + 1] - indptr[w0] == 87  # one posting per text holding it
    assert tf[indptr[w0]:indptr[w0 + 1]].tolist() == [t.split().count("w0") for chunk in [texts] * 6 + [more]
                                                      for t in chunk if "w0" in t.split()]


def _scorer(seen=None, inf_every=0):
    """A finish scorer: random idf and inv of the sizes it is given (every inf_every-th inv +inf, as k1 = 0 gives)."""
    def scorer(indptr, lengths):
        rng = np.random.default_rng(len(indptr))
        n_terms, n_docs = len(indptr) // 8 - 1, len(lengths) // 4
        idf, inv = rng.uniform(0.01, 9, n_terms).astype(np.float32), rng.uniform(0.2, 3, n_docs).astype(np.float32)
        if inf_every:
            inv[::inf_every] = np.inf
        if seen is not None:
            seen.append((bytes(indptr), bytes(lengths), idf, inv))
        return idf, inv
    return scorer


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("allocated", [False, True])
def test_finish_with_a_scorer_writes_score_lucenes_bits_in_tfs_place(n_threads, allocated):
    """finish(..., scorer): the scorer gets the finished indptr and the documents' lengths, and each posting's
    Lucene score with its (idf, inv) is written where its tf went, as float32: bit for bit what score_lucene
    gives on the tfs (inv +inf included: the score is w), into allocate's buffers too."""
    indptr, indices, tf, lengths = [np.frombuffer(b, t) for b, t in zip(_random_builder(4).finish(210, n_threads),
                                                                        (np.int64, np.int32, np.int32, np.int32))]
    seen = []
    allocate = (lambda n: (np.zeros(n, np.int32), np.zeros(n, np.int32))) if allocated else None
    got = _random_builder(4).finish(210, n_threads, allocate, _scorer(seen, inf_every=7))
    (s_indptr, s_lengths, idf, inv), = seen
    assert s_indptr == indptr.tobytes() and s_lengths == lengths.tobytes()
    want = compiled.score_lucene(indptr, indices, tf, idf, inv, n_threads)
    scores = (got[2] if allocated else np.frombuffer(got[2], np.int32)).view(np.float32)
    assert scores.tobytes() == want.tobytes() and len(scores) > 2000
    assert np.isin(scores, idf).sum() > 100  # (the +inf documents' postings: w itself)
    np.testing.assert_array_equal(np.asarray(got[1]).view(np.int32) if allocated else np.frombuffer(got[1], np.int32), indices)


@needs_extension
@pytest.mark.parametrize("bad, error, match", [
    (lambda i, n: [np.zeros(1, np.float32)] * 2, TypeError, "tuple"),
    (lambda i, n: (np.zeros(len(i) // 8, np.float32), np.zeros(len(n) // 4, np.float32)), ValueError, "of idf"),
    (lambda i, n: (np.zeros(len(i) // 8 - 1, np.float32), np.zeros(len(n) // 4 - 1, np.float32)), ValueError, "of inv"),
    (lambda i, n: 1 / 0, ZeroDivisionError, None),
])
def test_finish_refuses_what_a_scorer_gives_and_stays_whole(bad, error, match):
    want = [np.frombuffer(b, t) for b, t in zip(_random_builder(6).finish(210), (np.int64, np.int32, np.int32, np.int32))]
    builder = _random_builder(6)
    with pytest.raises(error, match=match):
        builder.finish(210, 1, None, bad)
    for w, g in zip(want, _finish(builder, 210)):
        np.testing.assert_array_equal(g, w)


@needs_extension
def test_finish_refuses_a_scorer_that_adds_to_the_builder():
    builder = loader.built_module().PostingsBuilder()
    builder.add(np.array([200], np.int64), np.arange(200, dtype=np.int32))

    def scorer(indptr, lengths):
        builder.add(np.array([0], np.int64), np.zeros(0, np.int32))  # a document without terms: no posting more
        return np.ones(200, np.float32), np.ones(1, np.float32)

    with pytest.raises(RuntimeError, match="changed the builder"):
        builder.finish(200, 1, None, scorer)
    indptr, indices, tf, lengths = _finish(builder, 200)
    assert lengths.tolist() == [200, 0] and int(tf.sum()) == 200 and indptr[-1] == len(indices) == 200


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("scored", [False, True])
def test_the_narrow_and_wide_scatters_give_the_same_bytes(n_threads, scored):
    """finish's scatter keeps each term's next slot and idf in 8 bytes under 2^31 postings (finish_scatter32),
    the int64 slots of finish_scatter above (wide=True takes it at any size): the same postings, tfs and
    scores, byte for byte, whichever runs."""
    scorer = _scorer(inf_every=5) if scored else None
    narrow = _random_builder(4).finish(210, n_threads, None, scorer)
    wide = _random_builder(4).finish(210, n_threads, None, _scorer(inf_every=5) if scored else None, True)
    assert [bytes(a) for a in narrow] == [bytes(b) for b in wide] and len(narrow[1]) > 2000
    # and the scores are score_lucene's on the unscored build's tfs
    if scored:
        indptr, indices, tf, _ = [np.frombuffer(b, t) for b, t in zip(_random_builder(4).finish(210, n_threads),
                                                                        (np.int64, np.int32, np.int32, np.int32))]
        idf, inv = _scorer(inf_every=5)(indptr.tobytes(), bytes(narrow[3]))  # (seeded: the idf and inv used)
        want = compiled.score_lucene(indptr, indices, tf, idf, inv, n_threads)
        assert np.frombuffer(narrow[2], np.int32).view(np.float32).tobytes() == want.tobytes()
