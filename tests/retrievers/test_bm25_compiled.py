"""The compiled path of the bm25s backend (``retrievers.bm25._fastbm25``, glue in
retrievers/bm25/compiled.py) against the pure-Python path it replaces: the same terms per text, the
same Porter stems, the same postings and the same runs, plus the extension's API edge cases."""

from __future__ import annotations

import random
import shutil
from functools import partial

import numpy as np
import pytest

from retrievers.bm25 import BM25Retriever, compiled
from retrievers.bm25.analyzer import Analyzer, lucene_porter_fixup
from retrievers.bm25.encode import TermEncoder
from retrievers.bm25.sparse_index import ScoringParams, SparseIndex, postings_from_chunks
from retrievers.topk import string_ranks, top_k_positive

HAS_C_COMPILER = bool(shutil.which("cc") or shutil.which("gcc"))

needs_extension = pytest.mark.skipif(
    compiled._fastbm25 is None,
    reason="retrievers.bm25._fastbm25 is not built (no C compiler at install time); the Python path is tested elsewhere")


@pytest.fixture
def compiled_on(monkeypatch):
    """The compiled path on, whatever HARNESS_BM25_COMPILED the test run was started with (skips
    when the extension is not built: test_extension_is_built_when_a_c_compiler_exists fails then)."""
    if compiled._fastbm25 is None:
        pytest.skip("retrievers.bm25._fastbm25 is not built")
    monkeypatch.delenv("HARNESS_BM25_COMPILED", raising=False)
    assert compiled.available()


# ------------------------------------------------------------------------------------ helpers
def term_strings(encoder, texts: list[str], chunks: int = 1) -> list[list[str]]:
    """The term strings of each text, encoding ``texts`` in ``chunks`` consecutive calls."""
    size = max(1, -(-len(texts) // chunks))
    out: list[list[str]] = []
    for start in range(0, len(texts), size):
        part = texts[start:start + size]
        counts, ids = encoder.encode(part)
        assert counts.dtype == np.int64 and ids.dtype == np.int32
        assert len(counts) == len(part) and int(counts.sum()) == len(ids)
        bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
        terms = encoder.terms
        out.extend([terms[i] for i in ids[a:b].tolist()] for a, b in zip(bounds[:-1], bounds[1:]))
    return out


def raw_encoder(analyzer: Analyzer, callback=None):
    """The bare C encoder as CompiledTermEncoder builds it, with an optional other callback."""
    return compiled._fastbm25.Encoder(sorted(analyzer.stopwords), analyzer.possessive, analyzer.stemmer_name == "porter",
                                      callback or partial(compiled.analyze_words, analyzer))


# ------------------------------------------------------------------------------ 1. it is built
def test_extension_is_built_when_a_c_compiler_exists():
    if not HAS_C_COMPILER:
        pytest.skip("no C compiler (cc or gcc) on PATH: the optional extension cannot have been built")
    try:
        import retrievers.bm25._fastbm25  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"a C compiler exists but retrievers.bm25._fastbm25 does not import ({exc}); "
                    "`pip install -e .` should compile it (retrievers/bm25/native/fastbm25.c)")
    assert compiled._fastbm25 is not None


# ------------------------------------------------------------------------ 2. tokenizer fuzz
# Weighted towards what the ASCII tokenizer rules turn on: letters and digits, the ExtendNumLet
# "_", the joiners . ' , ; : " (MidLetter / MidNum / MidNumLet / Single_Quote, or only loose), other
# punctuation, "s"/"S" (possessives), and whitespace, including \x1c, which str.split() and re's \s
# treat as whitespace but bytes.split() does not.
_ALPHABET = (
    [(c, 3) for c in "abcdefghijklmnopqrstuvwxyz"] + [(c, 1) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    + [(c, 2) for c in "0123456789"]
    + [(c, 6) for c in "_.',;:\"-/()"] + [("s", 8), ("S", 3)]
    + [(" ", 10), ("\t", 2), ("\n", 2), ("\r", 1), ("\x0b", 1), ("\x0c", 1), ("\x1c", 1)]
    + [(c, 1) for c in "!#$%&*+<=>?@[\\]^`{|}~\x00\x01\x1f\x7f"]
)
_CHARS = [c for c, _ in _ALPHABET]
_WEIGHTS = [w for _, w in _ALPHABET]

# Real words: stopwords (any case), possessives, joined tokens, Porter's suffixes, Lucene-only stems.
_WORDS = (
    "the The THE and AND a A is as of it's It's a's 's s's S'S John's JOHN'S cats's don't e.g. e.g U.S.A. "
    "3.14 1,000 1;2 a:b a.1 1.a foo_bar _x_ __ x__y abc123 h2o2 covid-19 IL-6 1990s cells running hopping "
    "relational conditional possibly assembly pathology technologies irreversibly trekking revved accing "
    "ulyyed viihmybliousness generalizations abilities caresses ponies ties feed agreed plastered motoring "
    "sky happy happily controlling rate cease sensibility electricity"
).split()


def _long_run(rng: random.Random) -> str:
    """A token longer than 255 characters, often with a possessive right at a cut boundary."""
    kind = rng.randrange(5)
    if kind == 0:  # letters with 's ending at, just before or just after a 255 / 510 cut
        cut = rng.choice([255, 510])
        n = cut + rng.choice([-3, -2, -1, 0, 1, 2])
        return "".join(rng.choice("abcxyz") for _ in range(n)) + rng.choice(["'s", "'S"]) + rng.choice(["", "ing", "'s"])
    if kind == 1:  # one letter repeated (stems of cut pieces), with an 's inside
        n = rng.randint(250, 600)
        word = rng.choice("xsey") * n
        pos = rng.randint(240, min(n, 270))
        return word[:pos] + "'s" + word[pos:]
    if kind == 2:  # digits joined by MidNum characters
        n = rng.randint(130, 300)
        return "".join(rng.choice("0123456789") + rng.choice(["", "", ",", ".", ";", "'"]) for _ in range(n)) + "1"
    if kind == 3:  # letters joined by MidLetter characters, and underscores
        n = rng.randint(130, 300)
        return "".join(rng.choice("abcdefghij") + rng.choice(["", "", ".", ":", "'", "_"]) for _ in range(n)) + "z"
    return "".join(rng.choices(_CHARS[:62] + ["_", "'", "."], k=rng.randint(256, 700)))  # letters and digits


def random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 25)):
        r = rng.random()
        if r < 0.3:
            parts.append(rng.choice(_WORDS))
        elif r < 0.33:
            parts.append(_long_run(rng))
        else:
            parts.append("".join(rng.choices(_CHARS, _WEIGHTS, k=rng.randint(1, 14))))
        parts.append(rng.choice([" ", " ", " ", "", "\t", "\n", "\x0b\x0c", "\x1c", "  "]))
    return "".join(parts)


# Words with non-ASCII characters: they go, once per distinct word, to the Python analyzer.
_NON_ASCII = [
    "α–β", "café", "CAFÉ's", "citizens’", "citizen’s", "5′UTR", "“quoted”", "«guillemets»", "😀", "👍🏽x",
    "日本語テキストです", "bad\ud800surrogate", "\ud800", "a\u00a0b", "x\u2009y", "naïve", "Straße", "İstanbul", "ΑΣ",
    "β-cell", "ＡＢＣ",
    "e\u0301tude", "a\u200db", "x²", "½", "µg/ml", "10\u2009000", "ŉ", "I\u0307", "\u00ad", "word\u0085next", "ℌ",
]


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
    seps = [chr(cp) for cp in points if compiled._fastbm25.is_separator(cp)]
    assert len(seps) > 11_000 and {"–", "−", "±", "≥", "×", "“", "°", "\u00a0", "-", "(", '"'} <= set(seps)
    assert not {"’", "·", "_", ".", ",", "α", "é", "\u0301", "\u200d", "ア", "中", "©", "a", "1"} & set(seps)
    ascii_seps = {c for c in map(chr, range(0x80)) if compiled._fastbm25.is_separator(ord(c))}
    assert ascii_seps == {c for c in map(chr, range(0x80)) if not regex.match(TOKEN_CHAR, c)}
    for x, y in [("ab", "cd"), ("1", "2"), ("a", "1"), ("x.", "y"), ("a_", "_b"), ("ア", "ア"), ("😀", "\u0301x"),
                 ("\U0001F1EB", "\U0001F1F7"), ("ก", "ข")]:
        expected = tokenize(x) + tokenize(y)
        got = tokenize(" ".join(x + c + y for c in seps))
        assert got == expected * len(seps), next(c for c in seps if tokenize(x + c + y) != expected)


# ------------------------------------------------------------------------------- 3. stemmer
# Outputs of Lucene 8.7's own org.apache.lucene.analysis.en.PorterStemmer (checked on its jar).
LUCENE_87_PORTER = {
    "trekking": "trek", "revved": "rev", "accing": "ac", "ulyyed": "uli", "viihmybliousness": "viihmybli",
    "assembly": "assembl", "pathology": "patholog", "possibly": "possibl",
    "as": "as", "is": "is", "a": "a",  # one or two letters: unchanged
}


@needs_extension
def test_stemmer_matches_lucene_examples():
    assert {w: compiled.stem(w) for w in LUCENE_87_PORTER} == LUCENE_87_PORTER


def snowball_oracle(words: list[str]) -> list[str]:
    """PyStemmer's ``porter`` corrected by :func:`lucene_porter_fixup`: independent of the C code, and
    equal to Lucene's PorterStemmer on every token of SciFact and NFCorpus (it differs on rare words
    such as trekking). Not ``Analyzer._stem``: that now stems ASCII words with the C stemmer itself."""
    import Stemmer

    stemmer = Stemmer.Stemmer("porter", 0)
    return [lucene_porter_fixup(w, s, stemmer) for w, s in zip(words, stemmer.stemWords(words))]


@needs_extension
def test_stemmer_matches_the_snowball_oracle_on_every_scifact_token():
    from harness.datasets import load_dataset

    ds = load_dataset("scifact")
    tokenize = Analyzer(stopwords=None, stemmer=None)
    tokens: set[str] = set()
    for text in ds.corpus.contents():
        tokens.update(tokenize(text))
    for text in ds.queries.texts:
        tokens.update(tokenize(text))
    words = sorted(t for t in tokens if t.isascii())
    assert len(words) > 30_000
    oracle = snowball_oracle(words)  # one batch
    assert sum(o != w for o, w in zip(oracle, words)) > 10_000  # most words do change
    stems = [compiled.stem(w) for w in words]
    diffs = [(w, c, o) for w, c, o in zip(words, stems, oracle) if c != o]
    assert diffs == [], f"{len(diffs)} of {len(words)} tokens differ (word, C, oracle): {diffs[:20]}"
    # the batch entry point the analyzer uses gives the same stems
    if hasattr(compiled._fastbm25, "stem_ascii"):
        assert compiled._fastbm25.stem_ascii(words) == stems


@needs_extension
def test_stem_refuses_words_longer_than_the_token_cut():
    assert compiled.stem("x" * 255) == "x" * 255
    with pytest.raises(ValueError):
        compiled.stem("x" * 256)


# -------------------------------------------------------------- 4. whole corpus: SciFact
@pytest.fixture(scope="module")
def scifact():
    from harness.datasets import load_dataset

    return load_dataset("scifact")


def _index_and_runs(monkeypatch, dataset, setting: str, params: dict):
    if setting == "python":
        monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
    else:
        monkeypatch.delenv("HARNESS_BM25_COMPILED", raising=False)
    assert compiled.available() == (setting == "compiled")
    retriever = BM25Retriever(cache=False, **params)
    retriever.index(dataset.corpus)
    # the compiled build leaves its frozen encoder for the queries; the Python build does not
    assert hasattr(retriever.backend, "_query_encoder") == (setting == "compiled")
    ks = (1000, 1, len(dataset.corpus) + 17)
    return retriever.backend.sparse_index, {k: retriever.search(dataset.queries, k) for k in ks}


def _postings_by_term(index: SparseIndex, order: np.ndarray):
    """indptr / indices / data / nonoccurrence with the terms renumbered in ``order``."""
    lengths = np.diff(index.indptr)[order]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    src = np.repeat(index.indptr[:-1][order] - indptr[:-1], lengths) + np.arange(indptr[-1])
    nonocc = None if index.nonoccurrence is None else index.nonoccurrence[order]
    return indptr, index.indices[src], index.data[src], nonocc


@needs_extension
@pytest.mark.parametrize("params", [{}, {"method": "bm25+"}, {"method": "robertson"}],
                         ids=["lucene", "bm25+", "robertson"])
def test_scifact_compiled_equals_python(monkeypatch, scifact, params):
    py_index, py_runs = _index_and_runs(monkeypatch, scifact, "python", params)
    c_index, c_runs = _index_and_runs(monkeypatch, scifact, "compiled", params)
    assert py_index.n_docs == c_index.n_docs == len(scifact.corpus) == 5183
    assert sorted(py_index.terms) == sorted(c_index.terms)
    assert py_index.n_terms > 25_000
    np.testing.assert_array_equal(py_index.doc_lengths, c_index.doc_lengths)
    assert py_index.doc_lengths.dtype == c_index.doc_lengths.dtype == np.int32
    py_post = _postings_by_term(py_index, np.argsort(np.array(py_index.terms, dtype=object)))
    c_post = _postings_by_term(c_index, np.argsort(np.array(c_index.terms, dtype=object)))
    for name, a, b in zip(("indptr", "indices", "data", "nonoccurrence"), py_post, c_post):
        if name == "nonoccurrence":
            assert (a is None) == (b is None) == (params.get("method") != "bm25+")
            if a is None:
                continue
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)  # float32 scores bit for bit
    assert py_post[2].dtype == np.float32 and len(py_post[2]) > 400_000
    for k, py_run in py_runs.items():
        c_run = c_runs[k]
        assert c_run.query_ids.tolist() == py_run.query_ids.tolist()
        assert c_run.doc_vocab.tolist() == py_run.doc_vocab.tolist()
        np.testing.assert_array_equal(c_run.offsets, py_run.offsets, err_msg=f"k={k}")
        np.testing.assert_array_equal(c_run.doc_codes, py_run.doc_codes, err_msg=f"k={k}")
        np.testing.assert_array_equal(c_run.scores, py_run.scores, err_msg=f"k={k}")
        hits = np.diff(py_run.offsets)
        assert hits.max() <= k
        if k == 1:
            assert hits.sum() >= 290
        else:
            assert hits.sum() > 200_000
    assert np.diff(py_runs[len(scifact.corpus) + 17].offsets).max() > 1000


@needs_extension
def test_scifact_index_cached_by_the_python_path_searched_by_the_compiled_one(monkeypatch, scifact, tmp_path):
    """A cached index built by the Python path is searched through the compiled encoder made from its
    vocabulary (CompiledTermEncoder(analyzer, terms)): the same runs as the Python search."""
    monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
    python = BM25Retriever(cache_dir=tmp_path)
    python.index(scifact.corpus)
    expected = python.search(scifact.queries, 100)
    monkeypatch.delenv("HARNESS_BM25_COMPILED")
    fast = BM25Retriever(cache_dir=tmp_path)
    fast.index(scifact.corpus)
    assert (python.backend.cache_status, fast.backend.cache_status) == ("built", "hit")
    got = fast.search(scifact.queries, 100)
    assert isinstance(fast.backend._query_encoder, compiled.CompiledTermEncoder)
    assert fast.backend._query_encoder.terms is fast.backend.sparse_index.terms
    for name in ("offsets", "doc_codes", "scores"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)
    assert len(got.scores) > 25_000


# ------------------------------------------------------------------ 5. encoder API edge cases
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
        compiled._fastbm25.Encoder([], True, True, "not callable")
    with pytest.raises(ValueError, match="does not support"):
        compiled.CompiledTermEncoder(Analyzer(stemmer="english"))


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
        builder = compiled._fastbm25.PostingsBuilder()
        with pytest.raises(error):
            encoder.encode(texts, n_threads=3, parallel_min_bytes=0, into=builder)
        with pytest.raises(RuntimeError):
            encoder.encode(["x"])
        assert [len(b) for b in builder.finish(0)] == [8, 0, 0, 0]  # nothing was appended


# ------------------------------------------------------------------------- 6. search edge cases
SMALL = [
    "apple banana apple", "banana cherry", "cherry", "apple cherry date", "date date date elder",
    "fig", "", "apple apple apple apple banana", "elder fig grape", "grape apple",
]


@pytest.fixture
def small_index(compiled_on):
    encoder = TermEncoder(Analyzer(stemmer=None))
    index = SparseIndex.build([encoder.encode(SMALL[:4]), encoder.encode(SMALL[4:])], encoder.terms, ScoringParams())
    ids = np.array([f"d{i:02d}" for i in range(len(SMALL))])[::-1].copy()  # id order differs from doc order
    rank = string_ranks(ids)
    doc_of_rank = np.empty_like(rank)
    doc_of_rank[rank] = np.arange(len(rank))
    return index, {t: i for i, t in enumerate(index.terms)}, rank, doc_of_rank


def _search(index, rank, doc_of_rank, queries: list[list[int]], k: int, **kw):
    offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
    term_ids = np.array([t for q in queries for t in q], dtype=np.int32)
    args = dict(indptr=index.indptr, indices=index.indices, data=index.data, n_docs=index.n_docs, offsets=offsets,
                term_ids=term_ids, k=k, id_rank=rank, doc_of_rank=doc_of_rank)
    args.update(kw)
    return compiled.search(**args)


def _python_search(index, rank, term_ids, k):
    docs, scores = index.search_one(term_ids)
    keep = scores > 0
    docs, scores = docs[keep], scores[keep]
    chosen = top_k_positive(scores, k, rank[docs])
    return docs[chosen], scores[chosen]


@needs_extension
def test_search_matches_search_one(small_index):
    index, tid, rank, doc_of_rank = small_index
    a, c, d = tid["apple"], tid["cherry"], tid["date"]
    queries = [[], [a], [a, a], [a, a, a, c], [c, a, c, d, a, c], [tid["fig"], tid["grape"], tid["fig"]], [d, d, d, d, d]]
    for k in (1, 2, 3, 100):
        hits, docs, scores = _search(index, rank, doc_of_rank, queries, k)
        assert hits.dtype == docs.dtype == np.int64 and scores.dtype == np.float64
        assert (scores == scores.astype(np.float32)).all()  # float32 values
        assert hits[0] == 0 and hits.sum() == len(docs) == len(scores)
        pos = 0
        for q, h in zip(queries, hits.tolist()):
            exp_docs, exp_scores = _python_search(index, rank, q, k) if q else (np.zeros(0), np.zeros(0, np.float32))
            assert docs[pos:pos + h].tolist() == exp_docs.tolist()
            np.testing.assert_array_equal(scores[pos:pos + h], exp_scores)
            pos += h
    # a term repeated q times weighs q times (in float32) when it is the query's only term
    _, d1, s1 = _search(index, rank, doc_of_rank, [[a]], 100)
    _, d3, s3 = _search(index, rank, doc_of_rank, [[a, a, a]], 100)
    assert d1.tolist() == d3.tolist() == [7, 0, 9, 3]  # the documents holding "apple"
    np.testing.assert_array_equal(s3, s1.astype(np.float32) * np.float32(3))  # multiplied in float32
    # equal scores go by document id descending: "fig" alone in doc 5 (id d04), with 2 others in doc 8 (id d01)
    hits, docs, scores = _search(index, rank, doc_of_rank, [[tid["fig"]]], 100)
    assert hits.tolist() == [2] and docs.tolist() == [5, 8] and scores[0] > scores[1]


@needs_extension
def test_search_top_k_with_many_documents_and_ties(compiled_on):
    """The compiled top k (a histogram of the keys' top bits, then a radix sort) against
    search_one + top_k_positive, on 3,000 documents over 6 words: scores tie in large groups, so
    the k-th score's group is cut by document id; k below, at and above the number of hits; the
    queries split among threads (results of queries with fewer than k hits closed up)."""
    rng = random.Random(5)
    words = ["ant", "bee", "cat", "dog", "eel", "fox"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    encoder = TermEncoder(Analyzer(stemmer=None))
    index = SparseIndex.build([encoder.encode(texts)], encoder.terms, ScoringParams())
    ids = np.array([f"doc{rng.randrange(10**6)}-{i}" for i in range(len(texts))])
    rank = string_ranks(ids)
    doc_of_rank = np.empty_like(rank)
    doc_of_rank[rank] = np.arange(len(rank))
    tid = {t: i for i, t in enumerate(index.terms)}
    queries = [[tid[w] for w in rng.sample(words, rng.randint(1, 4))] for _ in range(20)]
    checked_cut = 0
    for k, n_threads in [(1, 1), (7, 3), (300, 1), (1000, 2), (2999, 25), (5000, 4)]:  # 25 threads > 20 queries
        hits, docs, scores = _search(index, rank, doc_of_rank, queries, k, n_threads=n_threads)
        pos = 0
        for q, h in zip(queries, hits.tolist()):
            exp_docs, exp_scores = _python_search(index, rank, q, k)
            assert docs[pos:pos + h].tolist() == exp_docs.tolist()
            np.testing.assert_array_equal(scores[pos:pos + h], exp_scores)
            checked_cut += 256 < h < int((index.search_one(q)[1] > 0).sum())
            pos += h
    assert checked_cut > 20  # the histogram cut ran, with more hits than k


@needs_extension
def test_search_with_constants_adds_them(small_index):
    index, tid, rank, doc_of_rank = small_index
    q = [tid["apple"], tid["cherry"]]
    _, docs, scores = _search(index, rank, doc_of_rank, [q], 100)
    _, docs2, scores2 = _search(index, rank, doc_of_rank, [q], 100, constants=np.array([0.25], np.float32))
    assert sorted(docs.tolist()) == sorted(docs2.tolist())
    by_doc = dict(zip(docs.tolist(), scores.tolist()))
    expected = {d: np.float32(by_doc[d]) + np.float32(0.25) for d in docs2.tolist()}
    assert expected == dict(zip(docs2.tolist(), scores2.tolist()))
    # a negative constant larger than every score leaves no hit (scores > 0 only)
    hits, _, _ = _search(index, rank, doc_of_rank, [q], 100, constants=np.array([-100], np.float32))
    assert hits.tolist() == [0]


@needs_extension
def test_search_rejects_bad_arguments(small_index):
    index, tid, rank, doc_of_rank = small_index
    ok = [[tid["apple"]]]
    _search(index, rank, doc_of_rank, ok, 5)
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 0)  # k < 1
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, n_docs=index.n_docs + 1)  # id_rank has n_docs entries
    with pytest.raises(ValueError):
        _search(index, rank[:-1], doc_of_rank, ok, 5)
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, data=index.data[:-1])
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, indptr=index.indptr[:-1])  # indptr[-1] != postings
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.array([0, 2], np.int64))  # past the term ids
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.array([1, 0], np.int64))  # decreasing
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, offsets=np.zeros(0, np.int64))  # not even [0]
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, constants=np.zeros(2, np.float32))  # one per query
    for bad in (index.n_terms, index.n_terms + 1000, -1):
        with pytest.raises(ValueError, match="out of range"):
            _search(index, rank, doc_of_rank, [[tid["apple"], bad]], 5)
    with pytest.raises(ValueError, match="whole number"):
        compiled._fastbm25.search(index.indptr.tobytes()[:-1], index.indices, index.data, index.n_docs,
                                  np.array([0, 1], np.int64), np.array([0], np.int32), 5, rank, doc_of_rank, None)


# --------------------------------------------------------------------------- 7. PostingsBuilder
def _finish(builder, n_terms, n_threads=1):
    raw = builder.finish(n_terms, n_threads)
    return [np.frombuffer(b, dtype=t) for b, t in zip(raw, (np.int64, np.int32, np.int32, np.int32))]


@needs_extension
def test_postings_builder_chunks_and_reference():
    rng = np.random.default_rng(7)
    n_terms = 300
    lengths = rng.integers(0, 40, size=500).astype(np.int64)
    lengths[[0, 17, 499]] = 0  # empty documents, at the start and the end too
    ids = (rng.zipf(1.5, size=int(lengths.sum())) % n_terms).astype(np.int32)
    one = compiled._fastbm25.PostingsBuilder()
    one.add(lengths, ids)
    whole = _finish(one, n_terms + 5)  # terms without postings at the end
    cuts = [0, 1, 2, 100, 101, 350, 500]
    builder = compiled._fastbm25.PostingsBuilder()
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
    b = compiled._fastbm25.PostingsBuilder()
    with pytest.raises(ValueError, match="add up"):
        b.add(np.array([2, 2], np.int64), np.array([0, 1, 2], np.int32))  # 4 counted, 3 given
    b = compiled._fastbm25.PostingsBuilder()
    with pytest.raises(ValueError, match="add up"):
        b.add(np.array([1], np.int64), np.array([0, 1], np.int32))  # 1 counted, 2 given
    b = compiled._fastbm25.PostingsBuilder()
    with pytest.raises(ValueError):
        b.add(np.array([-1, 2], np.int64), np.array([0], np.int32))
    b = compiled._fastbm25.PostingsBuilder()
    with pytest.raises(ValueError, match="negative"):
        b.add(np.array([1], np.int64), np.array([-3], np.int32))
    b = compiled._fastbm25.PostingsBuilder()
    with pytest.raises(ValueError, match="whole number"):
        b.add(np.array([1], np.int32), np.array([0], np.int32))  # counts are int64
    b = compiled._fastbm25.PostingsBuilder()
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
    b = compiled._fastbm25.PostingsBuilder()
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
    a, b = compiled._fastbm25.PostingsBuilder(), compiled._fastbm25.PostingsBuilder()
    a.add(lengths, ids)
    b.add_postings(*args)
    b.add_postings(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32))
    for x, y in zip(_finish(a, 50), _finish(b, 50)):
        np.testing.assert_array_equal(x, y)
    one = lambda *v: tuple(np.array(x, t) for x, t in zip(v, (np.int64, np.int64, np.int32, np.int32)))  # noqa: E731
    b = compiled._fastbm25.PostingsBuilder()
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


@needs_extension
def test_corpus_digest_compiled_equals_the_python_byte_stream(monkeypatch, scifact):
    """The cache key's corpus digest fed by the extension (no joined strings) equals sha256 of the
    documented stream: per chunk and column, int64 lengths, then the joined UTF-8 (surrogatepass)."""
    import hashlib

    from retrievers.bm25.bm25s_backend import corpus_chunks
    from retrievers.bm25.cache import corpus_digest

    def reference(chunks):
        h = hashlib.sha256()
        for chunk in chunks:
            for column in chunk:
                h.update(np.array([len(s) for s in column], dtype=np.int64).tobytes())
                h.update("".join(column).encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    odd = [(["a", "b\ud800", "", "c" * (3 << 20)], ["", "é" * 700_000, "\udfff", "t"], ["x", "", "😀 y", ""])]
    scifact_chunks = list(corpus_chunks(scifact.corpus, 2000))
    for chunks in (odd, scifact_chunks, []):
        monkeypatch.setenv("HARNESS_BM25_COMPILED", "1")
        fast = corpus_digest(iter(chunks))
        monkeypatch.setenv("HARNESS_BM25_COMPILED", "0")
        assert fast == corpus_digest(iter(chunks)) == reference(chunks)
    with pytest.raises(TypeError):
        compiled._fastbm25.digest_column(hashlib.sha256().update, ["a", 3])


def test_frozen_encoder_refuses_new_terms(compiled_on):
    encoder = compiled.CompiledTermEncoder(Analyzer(), ["cell"]).freeze()
    assert encoder.encode(["cells mice"])[1].tolist() == [0]
    with pytest.raises(RuntimeError, match="frozen"):
        encoder._encoder.add_terms(["mice"])


def test_search_rejects_damaged_index_arrays(small_index):
    """A damaged index raises instead of reading out of bounds."""
    index, tid, rank, doc_of_rank = small_index
    ok = [[tid["apple"]]]
    bad_indptr = index.indptr.copy()
    bad_indptr[1], bad_indptr[2] = bad_indptr[2] + 1, bad_indptr[1]
    with pytest.raises(ValueError, match="ascending"):
        _search(index, rank, doc_of_rank, ok, 5, indptr=bad_indptr)
    shifted = index.indptr + 1
    shifted[-1] = index.indptr[-1]
    with pytest.raises(ValueError):
        _search(index, rank, doc_of_rank, ok, 5, indptr=shifted)
    bad_indices = index.indices.copy()
    bad_indices[0] = index.n_docs
    with pytest.raises(ValueError, match="out of range"):
        _search(index, rank, doc_of_rank, ok, 5, indices=bad_indices)
    bad_rank = rank.copy()
    bad_rank[0] = index.n_docs + 7
    with pytest.raises(ValueError, match="id_rank"):
        _search(index, bad_rank, doc_of_rank, ok, 5)


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
    into, ref = compiled._fastbm25.PostingsBuilder(), compiled._fastbm25.PostingsBuilder()
    for part in (slice(0, 700), slice(700, None)):
        assert c.encode(texts[part], titles=titles[part], into=into, **kw) is None
        ref.add(*r.encode(joined[part], **kw))
    assert c.terms() == r.terms()
    for x, y in zip(_finish(ref, len(r.terms())), _finish(into, len(r.terms()))):
        np.testing.assert_array_equal(x, y)
    # mixed in one builder: add(ids), then into=, then add_postings, then into= again
    c, r = raw_encoder(Analyzer()), raw_encoder(Analyzer())
    mixed, ref = compiled._fastbm25.PostingsBuilder(), compiled._fastbm25.PostingsBuilder()
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


@needs_extension
def test_parallel_encoding_equals_sequential_on_random_texts():
    rng = random.Random(11)
    texts = [random_text(rng) for _ in range(600)] + ["café’s α-helix", "\ud800 lone", "", "the of and"]
    rng.shuffle(texts)
    for analyzer in (Analyzer(), Analyzer(stemmer=None), Analyzer(stopwords=None, possessive=False)):
        chunks = [texts[:300], texts[300:]]
        assert _encode_all(analyzer, chunks, n_threads=4, parallel_min_bytes=0) == _encode_all(analyzer, chunks)


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
