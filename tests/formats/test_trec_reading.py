"""Reading runs and qrels as trec_eval does, and refusing clearly where it would misread (issue 13).

Sources: trec_eval 10.0 ``get_trec_results.c`` (columns split on C ``isspace``; the rank column
skipped; the rest of a line after the tag skipped; blank lines and lines whose first non-space
character is ``#`` skipped; the score read with ``atof``). Every case runs through both readers: the
columnar one (pyarrow.csv, used when it takes the file) and the line reader (the reference).
"""

from __future__ import annotations

import gzip

import pytest

from harness.errors import InputError
from harness.formats.columnar import read_run_columns
from harness.formats.trec import read_qrels, read_run, read_run_lines

PLAIN = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\nq2 Q0 d1 1 0.5 tag\n"
PLAIN_DICT = {"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d1": 0.5}}


def both(tmp_path, text: str | bytes):
    """(columnar result or None, line-reader result) for ``text``, and read_run's."""
    data = text.encode() if isinstance(text, str) else text
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    return read_run_columns(lambda: data), read_run_lines(data, path), read_run(path)


@pytest.mark.parametrize("text", [
    PLAIN,
    "q1 Q0 d1 1 2.5 tag extra columns here\nq1 Q0 d2 2 1.5 tag x y z\nq2 Q0 d1 1 0.5 tag 1 2 3\n",  # extra columns
    "q1 Q0 d1 one 2.5 tag\nq1 Q0 d2 2.0 1.5 tag\nq2 Q0 d1 - 0.5 tag\n",  # rank not an integer: ignored
    "q1\tQ0\td1\t1\t2.5\ttag\nq1  Q0   d2 2 1.5\t tag\n  q2 Q0 d1 1 0.5 tag  \n",  # tabs, runs of spaces, edges
    "q1 Q0 d1 1 2.5 tag\nq1  Q0 d2 2 1.5 tag\n q2 Q0 d1 1 0.5 tag \n",  # spaces only: parsed again, collapsed
    "q1  Q0  d1  1  2.5  tag\nq1  Q0  d2  2  1.5  tag\nq2  Q0  d1  1  0.5  tag\n",  # two spaces everywhere
    "# ir_metadata: run-id tag\n#{\"a\": 1}\nq1 Q0 d1 1 2.5 tag\n  # indented comment\nq1 Q0 d2 2 1.5 tag\n\n"
    "q2 Q0 d1 1 0.5 tag\n# trailing",  # comment lines (trec_eval 10), blank lines, no final newline
    PLAIN.replace("\n", "\r\n"),  # CRLF line ends
])
def test_accepted_like_trec_eval(tmp_path, text):
    columnar, lines, run = both(tmp_path, text)
    assert lines.to_dict() == run.to_dict() == PLAIN_DICT
    if columnar is not None:
        assert columnar.to_dict() == PLAIN_DICT


def test_mixed_column_counts_are_read_by_the_line_reader(tmp_path):
    text = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag extra\nq2 Q0 d1 1 0.5 tag\n"
    columnar, lines, run = both(tmp_path, text)
    assert columnar is None and run.to_dict() == lines.to_dict() == PLAIN_DICT


def test_plain_files_take_the_columnar_path_with_sorted_vocabulary(tmp_path):
    columnar, _, run = both(tmp_path, PLAIN)
    assert columnar is not None and run.vocab_sorted and run.doc_vocab.tolist() == ["d1", "d2"]


def test_long_ids_and_shared_prefixes_intern_in_string_order(tmp_path):
    # Ids longer than 8 bytes are compared over several words; "doc-1" < "doc-10" < "doc-1000000000-a" < "doc-2".
    ids = ["doc-2", "doc-1000000000-a", "doc-10", "doc-1", "doc-1000000000-b", "a" * 40]
    text = "".join(f"q{q} Q0 {d} 1 {float(i % 3)} t\n" for q in (2, 1) for i, d in enumerate(ids))
    columnar, lines, run = both(tmp_path, text)
    assert columnar is not None and columnar.vocab_sorted
    assert columnar.doc_vocab.tolist() == sorted(ids)
    assert columnar.to_dict() == lines.to_dict() and columnar.query_ids.tolist() == ["q2", "q1"]
    for i in range(2):  # ties (equal scores) broken by id descending, as the line reader does
        assert columnar.doc_ids(i) == lines.doc_ids(i)


@pytest.mark.parametrize("alphabet", ["0123456789", "0123456789abcdef-_.", "".join(map(chr, range(33, 127)))])
def test_packed_and_word_interning_agree_with_string_order(tmp_path, alphabet):
    # Short ids over a small alphabet pack into one integer sort (digits: 4 bits a character); ids over
    # all printable ASCII do not fit and go through the word sort. Both must give Python's string order
    # (prefixes first: "1" < "10" < "1a"), and ties over many ids broken by id descending as the line reader.
    import numpy as np
    import pyarrow as pa

    from harness.formats.columnar import _intern, _sorted_by_packed_keys, _sorted_by_words

    rng = np.random.default_rng(len(alphabet))
    pool = sorted({"".join(rng.choice(list(alphabet), size=rng.integers(1, 9))) for _ in range(300)})
    pool = [d for d in pool if d[0] != "#"]
    lines = []
    for q in range(20):
        docs = rng.choice(pool, size=60, replace=False)
        scores = rng.integers(0, 4, size=60)  # 4 distinct scores: large tie groups
        lines += [f"q{q} Q0 {d} {r} {s} t\n" for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1)]
    text = "".join(lines)
    columnar, by_line, _ = both(tmp_path, text)
    assert columnar is not None and columnar.vocab_sorted
    used = sorted({line.split()[2] for line in lines})
    assert columnar.doc_vocab.tolist() == used
    assert columnar.to_dict() == by_line.to_dict()
    for i in range(columnar.n_queries):
        ids = columnar.doc_ids(i)
        assert ids == by_line.doc_ids(i)
        scores = columnar.scores[columnar.offsets[i]:columnar.offsets[i + 1]].tolist()
        assert [(s, d) for s, d in zip(scores, ids)] == sorted(zip(scores, ids), reverse=True)
    column = pa.array([line.split()[2] for line in lines])
    codes, vocab, first = _intern(column, with_first=True)
    assert vocab.tolist() == used and vocab[codes].tolist() == column.to_pylist()
    assert first.tolist() == [column.to_pylist().index(d) for d in used]  # first position of each id
    raw = np.array([list(d.encode().ljust(8, b"\0")) for d in column.to_pylist()], dtype=np.uint8)
    packed, words = _sorted_by_packed_keys(raw), _sorted_by_words(raw)
    assert (packed[0] is None) == (len(alphabet) > 16 * 2)  # 95 characters: 7 bits x 8 + 11 > 64
    if packed[0] is not None:
        assert np.array_equal(packed[1], words[1]) and np.array_equal(packed[2], words[2])
        assert np.array_equal(raw[packed[0]], raw[words[0]])


def test_unicode_spaces_stay_inside_ids(tmp_path):
    # trec_eval splits on ASCII isspace only; U+00A0 and U+2003 are part of the id (Python's str.split would cut).
    text = "q1 Q0 d\u00a01 1 2.5 tag\nq1 Q0 d\u20032 2 1.5 tag\n"
    columnar, lines, run = both(tmp_path, text)
    assert columnar is None  # non-ASCII ids: the line reader
    assert run.to_dict() == lines.to_dict() == {"q1": {"d\u00a01": 2.5, "d\u20032": 1.5}}


def test_gzipped_run_and_qrels(tmp_path):
    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(PLAIN.encode()))
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(b"q1 0 d1 1\nq2 0 d1 0\n"))
    assert read_run(tmp_path / "run.trec.gz").to_dict() == PLAIN_DICT
    assert read_qrels(tmp_path / "qrels.gz").to_dict() == {"q1": {"d1": 1}, "q2": {"d1": 0}}


@pytest.mark.parametrize("text, message", [
    # Python's float reads "1_0" as 10, C's atof (trec_eval) as 1: refused.
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1_0 tag\n", ":2: score '1_0' is not a number (id 'd2')"),
    ("q1 Q0 d1 1 0x10 tag\n", ":1: score '0x10' is not a number (id 'd1')"),
    # A lone CR: trec_eval reads it as a space, Python's text mode as a line break.
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2\r1.5 tag\n", ":2: carriage return inside a line (a lone CR; trec_eval reads "
                                                  "it as a space, Python as a line break): fix the line ends"),
    ("q1 Q0 d1 1 2.5\n", ":1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    # Runs of spaces must not hide a missing column (the field count would match: q1,"",d1,...).
    ("q1 Q0 d1 1 2.5 tag\nq1  d2 2 1.5 tag\n", ":2: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2  1.5 tag\n", ":2: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("q1 Q0 d1 1 2.5 \nq1 Q0 d2 2 1.5 \n", ":1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("q1 Q0 d1 1 NaN tag\n", ":1: score is NaN (id 'd1')"),
    ("q1 Q0 d1 1 2 t\nq1 Q0 d2 1 2 t\nq1 Q0 d1 3 1 t\n",
     ":3: document retrieved twice for query 'q1' (first on line 1) (id 'd1')"),
    (b"q1 Q0 d\xff 1 2 t\n", ":1: b'd\\xff' is not UTF-8 text"),
    ("", ": the run file is empty, which trec_eval refuses too (a run that retrieved nothing is written "
         "as a '#' comment line)"),  # ("# only a comment\n\n": an empty run, test_trec_empty_run.py)
])
def test_refused_with_file_line_and_id(tmp_path, text, message):
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    assert read_run_columns(path.read_bytes) is None
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value) == f"{path}{message}"


@pytest.mark.parametrize("text, message", [
    ("q1 0 d1 1_0\n", ":1: grade '1_0' for document 'd1' is not a number (id 'q1')"),
    ("q1 0 d1 1\nq1 0 d2\r1\n", ":2: carriage return inside a line"),
])
def test_bad_qrels_refused(tmp_path, text, message):
    path = tmp_path / "qrels"
    path.write_text(text, newline="")
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert str(err.value).startswith(f"{path}{message}")


def test_qrels_comments_tabs_and_unicode_spaces(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("# header\nq1\t0\td\u00a01\t2\n\nq1  0 d2 -1\n")
    assert read_qrels(path).to_dict() == {"q1": {"d\u00a01": 2, "d2": -1}}


def test_harness_evaluate_imports_no_heavy_module(tmp_path):
    # Startup cost: `harness evaluate` must not pull torch, datasets, sentence-transformers or pandas
    # (pyarrow's to_numpy on chunked arrays imports pandas; the columnar reader avoids it).
    import subprocess
    import sys

    (tmp_path / "run").write_text(PLAIN)
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    code = ("import sys; from harness.cli import main\n"
            f"sys.argv = ['harness', 'evaluate', '--qrels', {str(tmp_path / 'qrels')!r}, '--run', {str(tmp_path / 'run')!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'datasets', 'sentence_transformers', 'pandas', 'scipy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_runs_of_spaces_stay_on_the_columnar_path(tmp_path):
    columnar, _, _ = both(tmp_path, PLAIN.replace(" ", "  "))
    assert columnar is not None and columnar.to_dict() == PLAIN_DICT
