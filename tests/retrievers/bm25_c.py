"""Shared by the tests of the compiled extension (test_bm25_c_*.py, test_bm25_engines.py)."""

from __future__ import annotations

import random
from functools import partial

import numpy as np
import pytest

from retrievers.bm25 import loader
from retrievers.bm25.analyzer import Analyzer

try:
    from retrievers.bm25 import compiled
except ImportError:  # the extension is not built
    compiled = None

needs_extension = pytest.mark.skipif(
    compiled is None,
    reason="retrievers.bm25._fastbm25 is not built (no C compiler at install time); the Python path is tested elsewhere")


@pytest.fixture
def compiled_on(monkeypatch):
    """The compiled path on, whatever HARNESS_BM25_COMPILED the test run was started with (skips
    when the extension is not built: test_extension_is_built_when_a_c_compiler_exists fails then)."""
    if compiled is None:
        pytest.skip("retrievers.bm25._fastbm25 is not built")
    monkeypatch.delenv("HARNESS_BM25_COMPILED", raising=False)
    assert loader.extension() is not None


@pytest.fixture(scope="module")
def scifact():
    from harness.datasets import load_dataset

    return load_dataset("scifact")


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
    return loader.built_module().Encoder(sorted(analyzer.stopwords), analyzer.possessive, analyzer.stemmer_name == "porter",
                                      callback or partial(compiled.analyze_words, analyzer))



def finish(builder, n_terms, n_threads=1):
    """PostingsBuilder.finish as arrays: (indptr int64, indices int32, tf int32, doc_lengths int32)."""
    raw = builder.finish(n_terms, n_threads)
    return [np.frombuffer(b, dtype=t) for b, t in zip(raw, (np.int64, np.int32, np.int32, np.int32))]


# ------------------------------------------------------------------------ tokenizer fuzz texts
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

