"""Porter stemming against Lucene's own PorterStemmer.

Golden data: tests/retrievers/data/lucene_porter_golden.tsv holds 3,300 words (Porter's rule examples,
words that exercise Lucene's departures from the published algorithm, and seeded random words with
digits and punctuation) with the stems Lucene 8.7.0's org.apache.lucene.analysis.en.PorterStemmer
gave them, called as PorterStemFilter calls it.
"""

from pathlib import Path

import pytest

from retrievers.bm25.analyzer import Analyzer
from retrievers.bm25.stemming import FALLBACK_PORTER, fallback_porter

GOLDEN = Path(__file__).parent / "data" / "lucene_porter_golden.tsv"


def golden() -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in GOLDEN.read_text().splitlines() if not line.startswith("#")]
    return [(w, s) for w, s in rows]


def test_golden_file_is_complete():
    rows = golden()
    assert len(rows) == 3300
    assert dict(rows)["trekking"] == "trek" and dict(rows)["assembly"] == "assembl"


def test_compiled_stemmer_equals_lucene():
    fast = pytest.importorskip("retrievers.bm25._fastbm25", reason="C extension not built (no compiler)")
    rows = golden()
    stems = fast.stem_ascii([w for w, _ in rows])
    wrong = [(w, got, want) for (w, want), got in zip(rows, stems) if got != want]
    assert wrong == []


def test_analyzer_stems_like_lucene():
    """The analyzer's batch and per-word paths give Lucene's stems (compiled stemmer for ASCII words)."""
    pytest.importorskip("retrievers.bm25._fastbm25", reason="C extension not built (no compiler)")
    rows = golden()
    analyzer = Analyzer(stopwords=None)
    words = [w for w, _ in rows]
    assert analyzer._stem(words) == [s for _, s in rows]
    assert [analyzer._stem([w])[0] for w in words[:200]] == [s for _, s in rows[:200]]


def test_fallback_porter_equals_lucene():
    """The pure-Python path (no compiler) stems every golden word as Lucene does, the rare words the
    old PyStemmer + fix-up fallback got wrong included (trekking -> trek, revved -> rev)."""
    rows = golden()
    stems = fallback_porter([w for w, _ in rows])
    assert FALLBACK_PORTER == "lucene"
    assert {w: got for (w, want), got in zip(rows, stems) if got != want} == {}
    assert fallback_porter(["trekking", "revved", "accing"]) == ["trek", "rev", "ac"]


def test_non_ascii_words_still_stemmed_by_pystemmer():
    analyzer = Analyzer(stopwords=None)
    assert analyzer._stem(["cafés", "running", "naïvely"]) == ["café", "run", "naïv"]
