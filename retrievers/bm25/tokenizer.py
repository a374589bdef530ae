"""Word tokenizers: a Lucene StandardTokenizer look-alike (Unicode word boundaries) and a simple one.

``standard`` follows the word-boundary rules of Unicode UAX #29 the way Lucene's StandardTokenizer
applies them (facts checked against Lucene 9 through Pyserini's analyzer, not its code):

* letters (Word_Break ALetter / Hebrew_Letter) and digits (Numeric) adjacent to each other form one
  token: ``abc123``, ``h2o2``;
* a MidLetter (``:``, ``·``), MidNumLet (``.``, ``’``) or Single_Quote (``'``) between two letters
  joins them: ``don't``, ``e.g`` (from ``e.g.``), ``u.s.a``, ``a:b``;
* a MidNum (``,``, ``;``), MidNumLet or Single_Quote between two digits joins them: ``3.14``,
  ``1,000``, ``1;2``;
* ExtendNumLet (``_``) joins letters/digits on either side: ``foo_bar``, ``_x``;
* combining marks and format characters (Extend, Format, ZWJ) stay with the preceding character;
* Katakana runs form one token; every Han ideograph and every Hiragana character is a token of its
  own; runs of South-East Asian script (Thai, Lao, Khmer, Myanmar) form one token; pictographic
  symbols and emoji (``©``, ``™``, ``😀``, flags, keycaps) are tokens;
* everything else (spaces, punctuation, other symbols) separates tokens and is dropped;
* a token longer than 255 characters is cut into pieces of 255 (Lucene's default maxTokenLength).

Speed: the exact rules need the ``regex`` module's Unicode properties, which is about 2.5x slower
than ``re``. So text is first cut with a loose ``re`` pattern into *candidates* (runs of characters
that are not space or ASCII punctuation, joined by the ASCII joiners ``. ' , ; : "``); every exact
token lies inside one candidate, because an exact token holds no space and no ASCII punctuation
other than those joiners. The exact rules then run once per distinct candidate string (see
:class:`retrievers.bm25.analyzer.Analyzer`), not once per occurrence.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_TOKEN_LENGTH = 255

_E = r"[\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]*"
_A = rf"[\p{{WB=ALetter}}\p{{WB=Hebrew_Letter}}]{_E}"
_N = rf"\p{{WB=Numeric}}{_E}"
_X = rf"\p{{WB=ExtendNumLet}}{_E}"
_K = rf"\p{{WB=Katakana}}{_E}"
_MID_LETTER = r"[\p{WB=MidLetter}\p{WB=MidNumLet}\p{WB=Single_Quote}]"
_MID_NUM = r"[\p{WB=MidNum}\p{WB=MidNumLet}\p{WB=Single_Quote}]"

_LETTERS = rf"(?:{_A})+(?:{_MID_LETTER}{_E}(?:{_A})+)*"
_NUMBERS = rf"(?:{_N})+(?:{_MID_NUM}{_E}(?:{_N})+)*"
_WORD = rf"(?:{_X})*(?:{_LETTERS}|{_NUMBERS})(?:(?:{_X})*(?:{_LETTERS}|{_NUMBERS}))*(?:{_X})*"
_KATAKANA = rf"(?:{_X})*(?:{_K})+(?:(?:{_X})+(?:{_K})+)*(?:{_X})*"
_SINGLE = rf"[\p{{Script=Han}}\p{{Script=Hiragana}}]{_E}"
_SOUTHEAST_ASIAN = rf"(?:\p{{Line_Break=Complex_Context}}{_E})+"
_EMOJI = (r"(?:\p{Regional_Indicator}{2}|[\p{Extended_Pictographic}\u2605])"
          r"[\p{Emoji_Modifier}\p{WB=Extend}\p{WB=Format}]*"
          r"(?:\u200D[\p{Extended_Pictographic}\u2605][\p{Emoji_Modifier}\p{WB=Extend}\p{WB=Format}]*)*")

EXACT_PATTERN = f"{_WORD}|{_KATAKANA}|{_SINGLE}|{_SOUTHEAST_ASIAN}|{_EMOJI}"

# Every character an exact token can hold is one of these (the classes EXACT_PATTERN is built from);
# any other character -- a *separator*: spaces, most punctuation and symbols -- is in no token, so a
# text may be cut at it without changing its tokens. (The compiled encoder cuts words at the
# separators of retrievers/bm25/native/separators.h, generated from this by gen_separators.py.)
TOKEN_CHAR = (r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}\p{WB=Numeric}\p{WB=ExtendNumLet}\p{WB=Katakana}"
              r"\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}\p{WB=MidLetter}\p{WB=MidNumLet}\p{WB=MidNum}"
              r"\p{WB=Single_Quote}\p{Script=Han}\p{Script=Hiragana}\p{Line_Break=Complex_Context}"
              r"\p{Regional_Indicator}\p{Extended_Pictographic}\u2605\p{Emoji_Modifier}\u200D]")

# Loose candidates: runs of anything but whitespace and ASCII punctuation (the joiners excepted),
# joined by ASCII joiners. A superset cut: exact tokens never cross a candidate's edge.
_JOINERS = ".',;:\""
_SEPARATORS = "".join(c for c in map(chr, range(0x21, 0x7F)) if not c.isalnum() and c not in _JOINERS + "_")
_RUN = rf"[^\s{re.escape(_SEPARATORS + _JOINERS)}]+"
LOOSE_PATTERN = rf"{_RUN}(?:[{re.escape(_JOINERS)}]+{_RUN})*"

SIMPLE_PATTERN = r"\w+"

TOKENIZERS = ("standard", "simple")


@lru_cache(maxsize=None)
def candidate_finder(name: str):
    """``text -> list[str]``: the loose candidates (standard) or the final tokens (simple)."""
    if name == "standard":
        return re.compile(LOOSE_PATTERN).findall
    if name == "simple":
        return re.compile(SIMPLE_PATTERN, re.UNICODE).findall
    raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")


@lru_cache(maxsize=None)
def separated_candidate_finder(name: str, separator: str = "\n"):
    """As :func:`candidate_finder`, but ``separator`` (a whitespace character, never inside a
    candidate) is found too, as an item of its own: marks the ends of words joined by it."""
    if not separator.isspace() or len(separator) != 1:
        raise ValueError(f"the separator must be one whitespace character, got {separator!r}")
    pattern = {"standard": LOOSE_PATTERN, "simple": SIMPLE_PATTERN}.get(name)
    if pattern is None:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
    return re.compile(f"{pattern}|{re.escape(separator)}").findall


@lru_cache(maxsize=None)
def _exact():
    import regex  # Unicode Word_Break properties; imported only when the standard tokenizer runs

    return regex.compile(EXACT_PATTERN, regex.V0).findall


def split_candidate(name: str, candidate: str) -> list[str]:
    """The final tokens inside one candidate, long tokens cut to pieces of 255 characters."""
    if name == "simple":
        tokens = [candidate]
    elif candidate.isascii() and candidate.isalnum():
        tokens = [candidate]  # the common case, already exact
    else:
        tokens = _exact()(candidate)
    if any(len(t) > MAX_TOKEN_LENGTH for t in tokens):
        tokens = [t[i:i + MAX_TOKEN_LENGTH] for t in tokens for i in range(0, len(t), MAX_TOKEN_LENGTH)]
    return tokens


@lru_cache(maxsize=None)
def _exact_separated():
    import regex

    return regex.compile(f"{EXACT_PATTERN}|\n", regex.V0).findall


def split_candidates(name: str, candidates: list[str]) -> list[list[str]]:
    """:func:`split_candidate` of each candidate, with one regex call for them all.

    Candidates never hold whitespace, so they are joined by newlines (which no exact token holds
    either) and the newlines found mark their ends.
    """
    joined = "\n".join(candidates) + "\n"
    if name == "simple" or joined.count("\n") != len(candidates):  # not candidates: one at a time
        return [split_candidate(name, c) for c in candidates]
    out: list[list[str]] = []
    tokens: list[str] = []
    for token in _exact_separated()(joined):
        if token == "\n":
            out.append(tokens)
            tokens = []
        elif len(token) > MAX_TOKEN_LENGTH:
            tokens.extend(token[i:i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH))
        else:
            tokens.append(token)
    return out


def tokenize(text: str, name: str = "standard") -> list[str]:
    """All tokens of ``text`` (slow path: for queries, tests and checks)."""
    return [t for c in candidate_finder(name)(text) for t in split_candidate(name, c)]
