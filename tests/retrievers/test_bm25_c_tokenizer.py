"""The compiled tokenizer / encoder (native/tokenizer.c, native/encoder.c) against the Python
analyzer it replaces: the same terms per text, sequential or on threads, and its API edge cases."""

from __future__ import annotations

import random

import numpy as np
import pytest

from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.encode import TermEncoder
from tests.retrievers.bm25_c import _NON_ASCII, _WORDS, random_text, raw_encoder, term_strings  # noqa: F401
from tests.retrievers.bm25_c import compiled, compiled_on, needs_extension, scifact  # noqa: F401



def test_tokenizer_fuzz_matches_the_python_path(compiled_on):
    rng = random.Random(20261122)
    texts = [random_text(rng) for _ in range(2500)]
    texts += ["x" * n + "'s" for n in range(250, 260)] + ["x" * 253 + "'s" + "x" * 300, "s" * 255 + "'s", "_" * 300 + "a"]
    assert all(t.isascii() for t in texts)
    assert sum(len(t) > 255 for t in texts) > 100  # long runs were generated
    # the same fuzz with non-ASCII words mixed in (the C encoder hands those words to Python)
    mixed = []
    for _ in range(500):
        words = random_text(rng).split(" ")
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randint(0, len(words)), rng.choice(_NON_ASCII) + rng.choice(["", "s", "'s", ".", "x"]))
        mixed.append(rng.choice([" ", "\t", "\x1c", "\u00a0"]).join(words))
    analyzers = [Analyzer(), Analyzer(stopwords=None, possessive=False), Analyzer(stemmer=None),
                 Analyzer(stopwords=["cells", "s", "x", "don't", "e.g", "1,000", "_x_"])]
    for analyzer in analyzers:
        expected = [analyzer(t) for t in texts + mixed]
        assert sum(map(len, expected)) > 20_000
        got = term_strings(compiled.CompiledTermEncoder(analyzer), texts + mixed, chunks=3)
        python = term_strings(TermEncoder(analyzer), texts + mixed, chunks=3)
        bad = [(t, g, e) for t, g, e in zip(texts + mixed, got, expected) if g != e]
        assert not bad, f"{analyzer.params()}: {len(bad)} texts differ, first: {bad[0]!r}"
        assert python == expected
        # one text at a time (every text a fresh chunk, the memo warm) gives the same
        encoder = compiled.CompiledTermEncoder(analyzer)
        assert [term_strings(encoder, [t])[0] for t in mixed[:100] + texts[:100]] == expected[-500:-400] + expected[:100]


def test_long_token_cut_and_possessive_at_the_boundary(compiled_on):
    analyzer = Analyzer(stemmer=None)
    encoder = compiled.CompiledTermEncoder(analyzer)
    cases = {
        "x" * 253 + "'s": ["x" * 253],                 # 255 characters: one token, possessive removed
        "x" * 254 + "'s": ["x" * 254 + "'", "s"],      # 256: cut between ' and s, no possessive
        "x" * 255 + "'s": ["x" * 255],                 # 257: the second piece "'s" is all possessive
        "x" * 256 + "'s": ["x" * 255, "x"],            # the second piece "x's" loses its 's
        "x" * 600: ["x" * 255, "x" * 255, "x" * 90],
    }
    for text, expected in cases.items():
        assert analyzer(text) == expected
        assert term_strings(encoder, [text]) == [expected]
        assert term_strings(encoder, ["\u00e9 " + text]) == [["\u00e9"] + expected]  # in a non-ASCII text


def test_ascii_texts_never_call_the_python_analyzer(compiled_on):
    analyzer = Analyzer()
    seen: list[list[str]] = []

    def spy(words):
        seen.append(list(words))
        return compiled.analyze_words(analyzer, words)

    encoder = raw_encoder(analyzer, spy)
    encoder.encode(["Plain ASCII text, with (punctuation) & x" * 3, "e.g. John's 3.14"])
    assert seen == []
    counts, ids = encoder.encode(["café café x", "CAFÉ café\u00a0y"])
    # once per distinct piece, one batch per call; U+00A0 is a separator: café + y, and y is ASCII
    assert seen == [["café", "CAFÉ"]]
    assert np.frombuffer(counts, dtype=np.int64).tolist() == [3, 3]
    # words are cut at separators (ASCII punctuation, U+2013, U+00B1): only the non-ASCII pieces go
    counts, ids = encoder.encode(["α–β-cells (IL-1β) ±5 naïve’s x·y"])
    assert seen[1:] == [["α", "β", "1β", "naïve’s", "x·y"]]
    terms = encoder.terms()
    assert [terms[i] for i in np.frombuffer(ids, dtype=np.int32)] == ["α", "β", "cell", "il", "1β", "5", "naïv", "x·y"]
    assert analyzer("α–β-cells (IL-1β) ±5 naïve’s x·y") == ["α", "β", "cell", "il", "1β", "5", "naïv", "x·y"]


@needs_extension
def test_separators_hold_no_token_so_words_may_be_cut_there():
    """Every code point the encoder cuts words at (ASCII punctuation; separators.h, generated from
    tokenizer.TOKEN_CHAR) splits tokens under the Python tokenizer too: tokens(X + c + Y) ==
    tokens(X) + tokens(Y), for neighbours that every joining rule would act on."""
    import regex

    from retrievers.bm25.tokenizer import TOKEN_CHAR, tokenize

    points = [cp for cp in range(0x10000) if not 0xD800 <= cp < 0xE000]
    seps = [chr(cp) for cp in points if loader.built_module().is_separator(cp)]
    assert len(seps) > 11_000 and {"–", "−", "±", "≥", "×", "“", "°", "\u00a0", "-", "(", '"'} <= set(seps)
    assert not {"’", "·", "_", ".", ",", "α", "é", "\u0301", "\u200d", "ア", "中", "©", "a", "1"} & set(seps)
    ascii_seps = {c for c in map(chr, range(0x80)) if loader.built_module().is_separator(ord(c))}
    assert ascii_seps == {c for c in map(chr, range(0x80)) if not regex.match(TOKEN_CHAR, c)}
    for x, y in [("ab", "cd"), ("1", "2"), ("a", "1"), ("x.", "y"), ("a_", "_b"), ("ア", "ア"), ("😀", "\u0301x"),
                 ("\U0001F1EB", "\U0001F1F7"), ("ก", "ข")]:
        expected = tokenize(x) + tokenize(y)
        got = tokenize(" ".join(x + c + y for c in seps))
        assert got == expected * len(seps), next(c for c in seps if tokenize(x + c + y) != expected)


# ------------------------------------------------------------------ encoder API edge cases
@needs_extension
def test_encoder_empty_inputs(compiled_on):
    encoder = compiled.CompiledTermEncoder(Analyzer())
    counts, ids = encoder.encode([])
    assert counts.dtype == np.int64 and ids.dtype == np.int32 and len(counts) == len(ids) == 0
    counts, ids = encoder.encode(["", " \t\n", "the of AND a An", "... --- ()", "café"])
    assert counts.tolist() == [0, 0, 0, 0, 1] and encoder.terms == ["café"]
    assert encoder.n_terms == 1


@needs_extension
def test_encoder_freeze_drops_unknown_terms(compiled_on):
    encoder = compiled.CompiledTermEncoder(Analyzer())
    counts, ids = encoder.encode(["Cells and mice", "naïve cells"])
    assert encoder.terms == ["cell", "mice", "naïv"] and ids.tolist() == [0, 1, 2, 0]
    assert encoder.freeze() is encoder and encoder._encoder.frozen
    counts, ids = encoder.encode(["cells unknownword MICE cells café naïve zzz's", "nothing known here"])
    assert counts.tolist() == [4, 0] and ids.tolist() == [0, 1, 0, 2]
    assert encoder.n_terms == 3 and encoder._encoder.n_terms == 3
    offsets, ids = encoder.query_terms(["mice mice x", "", "cells"])
    assert offsets.tolist() == [0, 2, 2, 3] and ids.tolist() == [1, 1, 0]
    # a vocabulary given up front (a cached index) keeps its numbering
    given = compiled.CompiledTermEncoder(Analyzer(), ["mice", "cell"]).freeze()
    assert given.encode(["cells mice rats"])[1].tolist() == [1, 0]


@needs_extension
def test_encoder_bad_inputs(compiled_on):
    analyzer = Analyzer()
    encoder = raw_encoder(analyzer)
    encoder.add_terms(["a", "b"])
    with pytest.raises(ValueError, match="repeat"):
        encoder.add_terms(["c", "a"])
    with pytest.raises(ValueError):
        compiled.CompiledTermEncoder(analyzer, ["x", "y", "x"])
    with pytest.raises(TypeError):
        encoder.encode(["fine", 3])
    with pytest.raises(TypeError):
        encoder.encode([b"bytes"])
    with pytest.raises(TypeError):
        encoder.encode(None)
    with pytest.raises(TypeError):
        encoder.add_terms([1])
    # a TypeError before any new non-ASCII word leaves the encoder usable
    counts, ids = encoder.encode(["cells"])
    assert np.frombuffer(counts, dtype=np.int64).tolist() == [1]
    with pytest.raises(TypeError):
        loader.built_module().Encoder([], True, True, "not callable")
    with pytest.raises(ValueError, match="does not support"):
        compiled.CompiledTermEncoder(Analyzer(stemmer="english"))


@needs_extension
def test_add_terms_numbers_a_large_vocabulary_in_order_and_names_a_repeat(compiled_on):
    """add_terms works 16 terms at a time (their table slots prefetched): every term keeps its
    position as its id across batches, a repeat inside a batch or across batches is named by
    position, and a term whose batch fails leaves the ones before it usable."""
    words = [f"w{i}x" for i in range(1000)]  # lowercase, unstemmed (no Porter suffix), not stopwords
    encoder = compiled.CompiledTermEncoder(Analyzer(), words).freeze()
    assert encoder.encode(["w999x w0x w17x w16x w15x"])[1].tolist() == [999, 0, 17, 16, 15]
    raw = raw_encoder(Analyzer())
    with pytest.raises(ValueError, match="term 40 is a repeat of term 3$"):
        raw.add_terms(words[:40] + [words[3]])
    with pytest.raises(ValueError, match="term 5 is a repeat of term 2$"):
        raw_encoder(Analyzer()).add_terms(["a", "b", "c", "d", "e", "c"])
    assert raw.n_terms == 40  # the terms before the repeat were added
    with pytest.raises(TypeError):
        raw_encoder(Analyzer()).add_terms(words[:20] + [None])


@needs_extension
def test_add_terms_blob_is_add_terms_of_its_lines(compiled_on):
    """add_terms_blob (a cached index's terms.txt as bytes) gives every term the id add_terms gives
    it: non-ASCII and surrogate-holding terms, one empty term, none; a count that is not the data's,
    or a repeat, is refused; a CompiledTermEncoder over a TermList encodes as over the list and makes
    no str per term."""
    from retrievers.bm25.sparse_index import TermList

    words = [f"w{i}x" for i in range(100)] + ["café", "日本", "\ud800z", "naïve"]
    blob = "\n".join(words).encode("utf-8", "surrogatepass")
    by_list, by_blob = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    by_list.add_terms(words)
    by_blob.add_terms_blob(blob, len(words))
    assert by_blob.n_terms == len(words) and by_blob.terms() == by_list.terms() == words
    one_empty = raw_encoder(Analyzer())
    one_empty.add_terms_blob(b"", 1)
    none = raw_encoder(Analyzer())
    none.add_terms_blob(b"", 0)
    assert one_empty.terms() == [""] and none.n_terms == 0
    for data, n, match in ((b"a\nb", 3, "holds 2 terms, not 3"), (b"a", 0, "holds 1 terms, not 0"),
                           (b"a\nb\nc\na", 4, "term 3 is a repeat of term 0")):
        with pytest.raises(ValueError, match=match):
            raw_encoder(Analyzer()).add_terms_blob(data, n)
    terms = TermList(blob, len(words))
    lazy = compiled.CompiledTermEncoder(Analyzer(), terms).freeze()
    eager = compiled.CompiledTermEncoder(Analyzer(), words).freeze()
    texts = ["w99x café w0x naïve zzz", "日本 w7x"]
    assert [a.tolist() for a in lazy.query_terms(texts)] == [a.tolist() for a in eager.query_terms(texts)]
    assert lazy.terms is terms and terms._terms is None  # no str made per term


def test_term_list_is_the_list_of_its_lines():
    """TermList: the terms of a terms.txt blob, made on first read; equal to the list; pickles; a
    blob holding another number of terms, or bytes that are not UTF-8, is refused."""
    import pickle

    from retrievers.bm25.sparse_index import TermList

    words = ["a", "é", "\ud800", "日本"]
    blob = "\n".join(words).encode("utf-8", "surrogatepass")
    terms = TermList(blob, 4)
    assert len(terms) == 4 and terms._terms is None
    assert terms == words and terms[1] == "é" and list(terms) == words and terms[1:3] == ["é", "\ud800"]
    assert pickle.loads(pickle.dumps(terms)) == words and terms != ["a"]
    assert TermList(b"", 0) == [] and TermList(b"", 1) == [""]
    for bad, n in ((blob, 3), (b"a", 0), (b"\xff\xfe", 1)):
        with pytest.raises(ValueError):
            TermList(bad, n)


class Boom(Exception):
    pass


@needs_extension
def test_encoder_callback_errors_break_the_encoder(compiled_on):
    def boom(words):
        raise Boom(words)

    encoder = raw_encoder(Analyzer(), boom)
    assert np.frombuffer(encoder.encode(["ascii only"])[0], dtype=np.int64).tolist() == [2]  # no call
    with pytest.raises(Boom):
        encoder.encode(["plain", "café au lait"])
    with pytest.raises(RuntimeError):
        encoder.encode(["plain"])

    encoder = raw_encoder(Analyzer(), lambda words: [[] for _ in words] + [[]])
    with pytest.raises(ValueError, match="number"):
        encoder.encode(["naïve"])
    with pytest.raises(RuntimeError):
        encoder.encode(["x"])

    encoder = raw_encoder(Analyzer(), lambda words: [[1] for _ in words])  # terms must be str
    with pytest.raises(TypeError):
        encoder.encode(["naïve"])
    with pytest.raises(RuntimeError):
        encoder.encode(["x"])

    # on threads: the callback runs while the threads scan; they are joined before the error rises
    texts = ["plain words here", "café au lait", "more naïve text"] * 40
    for callback, error in ((boom, Boom), (lambda words: [[1] for _ in words], TypeError),
                            (lambda words: [[] for _ in words] + [[]], ValueError)):
        encoder = raw_encoder(Analyzer(), callback)
        builder = loader.built_module().PostingsBuilder()
        with pytest.raises(error):
            encoder.encode(texts, n_threads=3, parallel_min_bytes=0, into=builder)
        with pytest.raises(RuntimeError):
            encoder.encode(["x"])
        assert [len(b) for b in builder.finish(0)] == [8, 0, 0, 0]  # nothing was appended



def test_frozen_encoder_refuses_new_terms(compiled_on):
    encoder = compiled.CompiledTermEncoder(Analyzer(), ["cell"]).freeze()
    assert encoder.encode(["cells mice"])[1].tolist() == [0]
    with pytest.raises(RuntimeError, match="frozen"):
        encoder._encoder.add_terms(["mice"])


# --------------------------------------------------------------------------- parallel encoding
def _encode_all(analyzer, chunks, **kw):
    encoder = raw_encoder(analyzer)
    outs = [encoder.encode(chunk, **kw) for chunk in chunks]
    return outs, encoder.terms()


@needs_extension
@pytest.mark.parametrize("n_threads", [2, 3, 5])
def test_parallel_encoding_equals_sequential_on_scifact(scifact, n_threads):
    """Texts tokenized on several threads give the same counts, term ids and vocabulary, bit for bit."""
    analyzer = Analyzer()
    texts = scifact.corpus.contents()
    chunks = [texts[:3000], texts[3000:], texts[:100] + ["α–β naïve cells"]]
    sequential = _encode_all(analyzer, chunks)
    parallel = _encode_all(analyzer, chunks, n_threads=n_threads, parallel_min_bytes=0)
    assert parallel == sequential
    assert len(sequential[1]) > 20_000


@needs_extension

@needs_extension
def test_parallel_encoding_equals_sequential_on_random_texts():
    rng = random.Random(11)
    texts = [random_text(rng) for _ in range(600)] + ["café’s α-helix", "\ud800 lone", "", "the of and"]
    rng.shuffle(texts)
    for analyzer in (Analyzer(), Analyzer(stemmer=None), Analyzer(stopwords=None, possessive=False)):
        chunks = [texts[:300], texts[300:]]
        assert _encode_all(analyzer, chunks, n_threads=4, parallel_min_bytes=0) == _encode_all(analyzer, chunks)


@needs_extension
@pytest.mark.parametrize("n_threads", [2, 3])
def test_parallel_caches_kept_across_calls_never_serve_an_old_calls_pending_value(n_threads):
    """Each part's token cache outlives the call; a token new in one call (cached there with a value
    pending that call's numbering) must come out with its final id in the next calls."""
    rng = random.Random(5)
    words = [f"w{i}x" for i in range(3000)]
    chunks = []
    for c in range(6):  # every chunk: words new to it, then the previous chunk's new words again
        new = words[c * 500:(c + 1) * 500]
        old = words[max(0, c - 1) * 500:c * 500]
        texts = [" ".join(rng.sample(new, 5) + rng.sample(old or new, 5)) for _ in range(200)]
        chunks.append(texts)
    chunks.append(chunks[0] + chunks[3])
    assert (_encode_all(Analyzer(), chunks, n_threads=n_threads, parallel_min_bytes=0)
            == _encode_all(Analyzer(), chunks))


@needs_extension
def test_parallel_encoding_frozen_drops_unknown_terms():
    analyzer = Analyzer()
    texts = ["cells mice", "rats cells café", "mice α"] * 50
    a, b = raw_encoder(analyzer), raw_encoder(analyzer)
    a.add_terms(["cell", "mice"])
    b.add_terms(["cell", "mice"])
    a.freeze()
    b.freeze()
    assert a.encode(texts, n_threads=3, parallel_min_bytes=0) == b.encode(texts)
    assert a.terms() == ["cell", "mice"]


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_arrow_columns_encode_as_their_strings(n_threads):
    """Encoder.encode(columns=True) reads Arrow string buffers in place (how the BM25 build reads a
    corpus): the same terms per text, postings and vocabulary as the same texts and titles given as
    str, sequentially and on threads, for sliced arrays (offset != 0), large_string, empty strings
    and non-ASCII words."""
    import pyarrow as pa

    rng = random.Random(23)
    texts, titles = [], []
    for i in range(900):
        words = random_text(rng).split(" ")
        if i % 7 == 0:
            words.insert(rng.randint(0, len(words)), rng.choice(_NON_ASCII) + rng.choice(["", "'s", "x"]))
        texts.append(_no_surrogates(" ".join(words)))  # (Arrow strings are valid UTF-8)
        titles.append("" if i % 5 == 0 else _no_surrogates(rng.choice(["café’s α-helix", "The cells", random_text(rng)[:40]])))
    cut = slice(37, 837)  # an array slice: its offsets do not start at 0
    for kind in (pa.string(), pa.large_string()):
        for with_titles in (True, False):
            a_texts, a_titles = pa.array(texts, kind)[cut], pa.array(titles, kind)[cut]
            assert a_texts.offset == 37
            results = []
            for columns in (False, True):
                encoder = raw_encoder(Analyzer())
                args = ((compiled.arrow_column(a_texts), compiled.arrow_column(a_titles)) if columns
                        else (texts[cut], titles[cut]))
                out = [encoder.encode(args[0], n_threads, 0, True, titles=args[1] if with_titles else None,
                                      columns=columns) for _ in range(2)]  # twice: the second call's tokens are known
                results.append(([[np.frombuffer(b, dtype=np.uint8).tobytes() for b in o] for o in out],
                                encoder.terms(0)))
            assert results[0] == results[1]
            assert len(results[0][1]) > 1000 and any(not t.isascii() for t in results[0][1])


def _no_surrogates(text: str) -> str:
    return "".join(c for c in text if not 0xD800 <= ord(c) <= 0xDFFF)


@needs_extension
def test_arrow_columns_bad_buffers_are_refused():
    encoder = raw_encoder(Analyzer())
    data = b"abc def"
    for offsets, error in [(np.array([0, 5, 3], np.int64), "non-decreasing"),
                           (np.array([-1, 3], np.int64), "non-decreasing"),
                           (np.array([0, 9], np.int64), "past the end"),
                           (np.array([], np.int64), "at least one offset")]:
        with pytest.raises(ValueError, match=error):
            encoder.encode((offsets, data), 1, columns=True)
    with pytest.raises(TypeError, match="tuple"):
        encoder.encode([np.array([0, 3], np.int64), data], 1, columns=True)
    with pytest.raises(ValueError, match="same length"):
        encoder.encode((np.array([0, 3], np.int64), data), 1, titles=(np.array([0, 1, 2], np.int64), data), columns=True)
    counts, ids = encoder.encode((np.array([0, 3, 7], np.int64), data), 1, columns=True)
    assert np.frombuffer(counts, np.int64).tolist() == [1, 1] and encoder.terms(0) == ["abc", "def"]


@needs_extension
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_tokens_around_sixteen_bytes_keep_their_terms_across_calls(n_threads):
    """Tokens of up to 16 bytes are found through a table holding their bytes inline (short_tokens),
    longer ones through the general table: words of 12 to 20 letters, with and without a possessive
    (18 bytes that become 16), upper and lower case, in several calls (each call's new tokens join the
    tables before the next), give the analyzer's terms, the same ids sequential or on threads, and a
    frozen copy of the vocabulary maps them alike. Words sharing their first 8 or more bytes are many."""
    rng = random.Random(16)
    words = ["".join(rng.choice("abcdefghij") for _ in range(n)) for n in range(12, 21) for _ in range(40)]
    words += ["gaaaaaaa" + "".join(rng.choice("ab") for _ in range(n - 8)) for n in range(12, 21) for _ in range(8)]
    forms = [w for w in words] + [w + "'s" for w in words] + [w.upper() for w in words[::3]]
    chunks = [[" ".join(rng.sample(forms, 12)) for _ in range(150)] for _ in range(4)]
    analyzer = Analyzer(stemmer=None)
    outs, terms = _encode_all(analyzer, chunks, n_threads=n_threads, parallel_min_bytes=0)
    assert (outs, terms) == _encode_all(analyzer, chunks)
    assert {len(t) for t in terms} == set(range(12, 21))
    expected = [t for chunk in chunks for text in chunk for t in analyzer(text)]
    assert term_strings(compiled.CompiledTermEncoder(analyzer), [t for c in chunks for t in c], chunks=4) == \
        [analyzer(t) for c in chunks for t in c]
    frozen = raw_encoder(analyzer)
    frozen.add_terms(terms)
    frozen.freeze()
    again = [frozen.encode(chunk, n_threads=n_threads, parallel_min_bytes=0) for chunk in chunks]
    assert again == outs and sum(len(bytes(o[1])) // 4 for o in outs) == len(expected)


@needs_extension
@pytest.mark.parametrize("n_threads", [2, 3])
def test_a_calls_new_tokens_join_the_tables_before_anything_reads_them(n_threads):
    """A parallel call's new tokens are added to the encoder's token tables on a thread of their own
    while the call finishes and returns (encoder.c: start_flush); the next call of any kind waits for
    that. Many new tokens per call (so that the flush is still running when the next call starts),
    each call followed at once by a sequential call (which reads and writes those tables), then a
    freeze and the same texts again, frozen: the same term ids and vocabulary as one sequential
    encoder. Same inputs as encoder, deleted right after a call (its flush joined, not freed under it)."""
    rng = random.Random(24)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 22))) for _ in range(30_000)]
    chunks = [[" ".join(rng.sample(words[c * 6_000:(c + 2) * 6_000], 40)) for _ in range(400)] for c in range(4)]
    small = [[" ".join(rng.sample(words, 6))] for _ in range(4)]
    analyzer = Analyzer(stemmer=None)

    def run(**kw):
        encoder = raw_encoder(analyzer)
        outs = []
        for chunk, few in zip(chunks, small):
            outs.append(encoder.encode(chunk, **kw))
            outs.append(encoder.encode(few))  # below parallel_min_bytes: the sequential path
        encoder.freeze()
        outs += [encoder.encode(chunk, **kw) for chunk in chunks]
        return outs, encoder.terms()

    sequential = run()
    assert run(n_threads=n_threads, parallel_min_bytes=0) == sequential
    assert len(sequential[1]) > 25_000
    for _ in range(3):
        encoder = raw_encoder(analyzer)
        encoder.encode(chunks[0], n_threads=n_threads, parallel_min_bytes=0)
        del encoder


@needs_extension
def test_long_texts_fill_the_token_queue_and_match_the_python_path():
    """The encoder queues up to TOKEN_BATCH (64) short tokens before resolving them (encoder.h); the fuzz
    texts above hold fewer. Texts of 8 to 16 fuzz texts each (long runs, possessives, stopwords, and
    non-ASCII words, each of which empties the queue, at random places) give the analyzer's terms, on one
    thread and on three."""
    rng = random.Random(64)
    texts = []
    for _ in range(300):
        words = " ".join(random_text(rng) for _ in range(rng.randint(8, 16))).split(" ")
        for _ in range(rng.randint(0, 3)):
            words.insert(rng.randint(0, len(words)), rng.choice(_NON_ASCII))
        texts.append(" ".join(words))
    analyzer = Analyzer()
    expected = [analyzer(t) for t in texts]
    assert sum(len(e) > 64 for e in expected) > 200  # (most fill the queue at least once)
    assert term_strings(compiled.CompiledTermEncoder(analyzer), texts, chunks=3) == expected
    chunks = [texts[:150], texts[150:]]
    assert _encode_all(analyzer, chunks, n_threads=3, parallel_min_bytes=0) == _encode_all(analyzer, chunks)
