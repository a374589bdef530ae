"""BEIR qrels have one reader (harness.formats.trec.read_beir_qrels): `harness evaluate --qrels x.tsv` and a
BEIR folder's qrels/<split>.tsv (harness.datasets.beir.load_qrels_tsv) read the same bytes to the same
judgments and refuse the same lines with the same message, which names the file, the line, the query
and the document. Plain files are read column-wise; that path must give the line reader's values."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.beir import load_qrels_tsv
from harness.errors import InputError
from harness.formats.trec import _beir_qrels_columns, _beir_qrels_lines, read_beir_qrels, read_qrels

READERS = [read_beir_qrels, load_qrels_tsv]


def _outcome(read, path: Path):
    try:
        qrels = read(path)
    except InputError as exc:
        return "error", str(exc)
    return qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist()


def _same_everywhere(tmp_path: Path, data: bytes):
    """The outcome of every entry point (and of the line reader alone) on ``data``, required equal."""
    path = tmp_path / "test.tsv"
    path.write_bytes(data)
    readers = list(READERS)
    words = [line.split() for line in data.split(b"\n") if line.split() and not line.split()[0].startswith(b"#")]
    if words and len(words[0]) == 3:
        readers.append(read_qrels)  # `harness evaluate`: a first line of 3 columns is BEIR's
    outcomes = [_outcome(read, path) for read in readers]
    outcomes.append(_outcome(lambda p: _beir_qrels_lines(p.read_bytes().removeprefix(b"\xef\xbb\xbf"), p), path))
    assert all(o == outcomes[0] for o in outcomes), outcomes
    return outcomes[0]


@pytest.mark.parametrize("data, expected", [
    # what both old readers accepted alike
    (b"query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td1\t-1\n",
     (["q1", "q1", "q2"], ["d1", "d2", "d1"], [2.0, 0.0, -1.0])),
    (b"\xef\xbb\xbf\r\nquery-id\tcorpus-id\tscore\r\nq1\td1\t1.5\r\n", (["q1"], ["d1"], [1.5])),
    (b"q1\t\td1\t+1e0\nq 1\td1\t1\n", (["q1", "q 1"], ["d1", "d1"], [1.0, 1.0])),  # tab runs; a space inside a tab column
    (b"q1\td1\t1\nq1\td1\t1\n", (["q1"], ["d1"], [1.0])),  # the same grade twice: one judgment
    (b"q\x00\td1\t1\n", (["q\x00"], ["d1"], [1.0])),
    # where the old readers differed, the TREC grammar (docs/evaluation.md) is kept
    (b"# a b\nquery-id\tcorpus-id\tscore\nq1\td1\t1\n", (["q1"], ["d1"], [1.0])),  # a comment before the header
    (b"q1\td1\t1\n#q2\td1\t1\n", (["q1"], ["d1"], [1.0])),  # a '#' line is a comment (the folder reader: query '#q2')
    (b"q1 d\xc2\xa01 1\n", (["q1"], ["d\u00a01"], [1.0])),  # U+00A0 stays inside an id (the folder reader split there)
    (b"q1\td1\xc2\xa0\t1\n", (["q1"], ["d1\u00a0"], [1.0])),  # and is not stripped (the folder reader gave 'd1')
])
def test_accepted_alike(tmp_path, data, expected):
    assert _same_everywhere(tmp_path, data) == expected


@pytest.mark.parametrize("data, message", [
    (b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1_0\n", ":3: grade '1_0' for document 'd2' is not a number (id 'q1')"),
    (b"q1\td1\t\xef\xbc\x91\n", ":1: grade '\uff11' for document 'd1' is not a number (id 'q1')"),  # not a header
    (b"q1\td1\tnan\n", ":1: grade 'nan' for document 'd1' is NaN (id 'q1')"),
    (b"q1\td1\t1e400\n", ":1: grade '1e400' for document 'd1' is not finite (id 'q1')"),
    (b"q1\td1\t1\nq1\td1\t2\n", ":2: conflicting grade for document 'd1' (line 1 says 1) (id 'q1')"),
    (b"q1\td1\t1\nq\xff\td1\t1\n", ":2: not valid UTF-8 (byte 0xff at column 2)"),
    (b"q1\td1\t1\nq1\td2\n", ":2: expected 3 tab-separated columns (query-id, corpus-id, score), got 2"),
    (b"query-id\tcorpus-id\tscore\n", ": no judgments in qrels file"),
    # where the old readers differed, the refusal is kept
    (b"q1\td1\t1\rq1\td2\t1\n", ":1: carriage return inside a line"),  # the folder reader took a lone CR as a line end
    (b"q1\t\t1\n", ":1: expected 3 tab-separated columns (query-id, corpus-id, score), got 2"),  # folder reader: doc ''
    (b"q1\td1\t\n", ":1: expected 3 tab-separated columns"),  # the folder reader skipped it as a header
    (b"q1\td1\t1\xc2\xa0\n", ":1: grade '1\\xa0' for document 'd1' is not a number (id 'q1')"),  # folder reader: 1
    (b"query-id\tcorpus-id\tsc\xffore\nq1\td1\t1\n", ":1: not valid UTF-8 (byte 0xff at column 22)"),  # a bad header
])
def test_refused_alike_naming_file_line_query_and_document(tmp_path, data, message):
    outcome = _same_everywhere(tmp_path, data)
    assert outcome[0] == "error" and outcome[1].startswith(f"{tmp_path / 'test.tsv'}{message}")


def test_gzipped_and_plain_give_the_same_judgments(tmp_path):
    text = b"query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td1\t1\n"
    (tmp_path / "test.tsv.gz").write_bytes(gzip.compress(text))
    (tmp_path / "test.tsv").write_bytes(text)
    assert load_qrels_tsv(tmp_path / "test.tsv.gz").to_dict() == load_qrels_tsv(tmp_path / "test.tsv").to_dict() \
        == {"q1": {"d1": 2}, "q2": {"d1": 1}}


@pytest.mark.parametrize("data, plain", [
    (b"query-id\tcorpus-id\tscore\nq1\td1\t1\n", True),
    (b"q1\td1\t1\r\nq1\td2\t0\r\n", True),
    (b"q1\td1\t1\nq1\td1\t1\n", True),  # a repeat with the same grade
    (b"q1\td1\t0\nq1\td1\t-0\n", False),  # equal grades of other bits: the line reader keeps the last
    (b"q1\td1\t1\nq1\td1\t2\n", False),  # a conflict: the line reader names it
    (b"q1 d1 1\n", False),
    (b"q1\td1\t1\n\nq2\td1\t1\n", False),
    (b"query-id\tcorpus-id\tscore\n\xef\xbb\xbfq1\td1\t1\n", False),  # pyarrow.csv would drop this BOM
    (b"q1\td1\t1_0\n", False),
])
def test_the_column_path_takes_plain_files_only(data, plain):
    assert (_beir_qrels_columns(data) is not None) == plain


def test_the_column_path_gives_the_line_readers_judgments(tmp_path):
    # Oracle: the line reader (the reference grammar) on the same bytes, random plain files with repeats.
    rng = random.Random(11)
    ids = ["1", "d-2", "é", "doc\u00a0x", "\U0001f600", "mid#", "q\x00"]  # ('#' first: a comment line)
    for case in range(150):
        grades = rng.choice([["0", "1", "2"], ["-1", "1.5", "+2e0", ".5", "1."], ["3", "03", "3.0"]])
        lines = [f"{rng.choice(ids)}\t{rng.choice(ids)}{rng.randint(0, 3)}\t{rng.choice(grades)}"
                 for _ in range(rng.randint(1, 25))]
        if rng.random() < 0.3 and len(lines) > 1:
            lines.append(lines[rng.randrange(len(lines))])  # a line repeated: same grade
        end = rng.choice(["\n", "\r\n"])
        data = (rng.choice(["", "query-id\tcorpus-id\tscore" + end]) + end.join(lines) + rng.choice(["", end])).encode()
        try:
            expected = _beir_qrels_lines(data, tmp_path / "q.tsv")
        except InputError:
            assert _beir_qrels_columns(data) is None, case  # a conflict: left to the line reader
            continue
        got = _beir_qrels_columns(data)
        assert got is not None, case
        assert got.query_ids.tolist() == expected.query_ids.tolist(), case
        assert got.doc_ids.tolist() == expected.doc_ids.tolist(), case
        assert np.array_equal(got.grades.view(np.int64), expected.grades.view(np.int64)), case


def test_the_path_is_chosen_by_size_and_gives_the_same_judgments(tmp_path, monkeypatch):
    """Files under COLUMNS_MIN_BYTES are read line by line (the column path's first use imports
    pyarrow.compute: ~0.06 s, more than a warm 1M-document run's whole qrels read); larger plain files
    column-wise; the judgments are the same."""
    from harness.formats import trec

    used = []
    real = trec._beir_qrels_columns
    monkeypatch.setattr(trec, "_beir_qrels_columns", lambda data: used.append(len(data)) or real(data))
    small = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n"
    rows = b"".join(b"q%d\td%d\t%d\n" % (i // 7, i, i % 3) for i in range(trec.COLUMNS_MIN_BYTES // 10))
    big = b"query-id\tcorpus-id\tscore\n" + rows
    assert len(big) >= trec.COLUMNS_MIN_BYTES
    for data, column_path in ((small, False), (big, True)):
        used.clear()
        path = tmp_path / "q.tsv"
        path.write_bytes(data)
        got = read_beir_qrels(path)
        assert bool(used) == column_path
        expected = _beir_qrels_lines(data.split(b"\n", 1)[1], path)
        assert got.query_ids.tolist() == expected.query_ids.tolist()
        assert got.doc_ids.tolist() == expected.doc_ids.tolist()
        assert got.grades.tolist() == expected.grades.tolist()
