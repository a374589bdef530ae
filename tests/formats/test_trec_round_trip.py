"""TREC files that must not be misread or lost: qrels read from the bytes already read (BEIR tsv
through ``.gz`` and pipes), corrupt ``.gz`` files, infinite grades, and runs / qrels the writer would
write but the reader would read otherwise (a ``#`` query id, a document id with whitespace)."""

from __future__ import annotations

import gzip
import os
import random

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import IdColumn, object_array
from harness.datasets.beir import load_qrels_tsv
from harness.errors import InputError
from harness.formats import native
from harness.formats.trec import read_qrels, read_run, write_qrels, write_run
from harness.qrels import Qrels
from harness.run import Run

BEIR = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td1\t1\n"
BEIR_DICT = {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}


@pytest.fixture(params=["compiled", "python"])
def writer(request, monkeypatch):
    if request.param == "compiled" and native._built is None:
        pytest.skip("the compiled run writer is not built (no C compiler)")
    monkeypatch.setenv(native.SWITCH, "1" if request.param == "compiled" else "0")


# --------------------------------------------------------------------------- qrels
@pytest.mark.parametrize("header", [True, False])
def test_gzipped_beir_qrels_are_read(tmp_path, header):
    # README: ".gz files decompressed". BEIR qrels were re-opened as plain text: UnicodeDecodeError (0x8b).
    text = BEIR if header else BEIR.split("\n", 1)[1]
    (tmp_path / "test.tsv.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "test.tsv").write_text(text)
    assert read_qrels(tmp_path / "test.tsv.gz").to_dict() == BEIR_DICT
    assert load_qrels_tsv(tmp_path / "test.tsv").to_dict() == BEIR_DICT  # the BEIR folder reader: the same


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
def test_beir_qrels_from_a_pipe_are_read_once():
    # `harness evaluate --qrels <(zcat test.tsv.gz)`: the pipe was read, then opened again (empty):
    # "no judgments in qrels file".
    read_end, write_end = os.pipe()
    os.write(write_end, BEIR.encode())
    os.close(write_end)
    try:
        assert read_qrels(f"/dev/fd/{read_end}").to_dict() == BEIR_DICT
    finally:
        os.close(read_end)


def test_beir_qrels_follow_the_trec_grammar(tmp_path):
    # Comment and blank lines skipped (a comment of 3 words is no header), a byte-order mark dropped,
    # CRLF ends, columns split on whitespace where tabs do not give 3.
    path = tmp_path / "qrels.tsv"
    path.write_bytes(b"\xef\xbb\xbfq1\td1\t2\r\n# a b\n\nq1 d2 0\r\nq2\t\td1\t1\n")
    assert read_qrels(path).to_dict() == BEIR_DICT


@pytest.mark.parametrize("text, message", [
    ("q1\td1\t1\nq1\td2\t1_0\n", ":2: grade '1_0' for document 'd2' is not a number (id 'q1')"),
    ("query-id\tcorpus-id\tscore\nq1\td1\tnan\n", ":2: grade 'nan' for document 'd1' is NaN (id 'q1')"),
    ("q1\td1\t1\nq1\td2\r1\n", ":2: carriage return inside a line"),
    ("q1\td1\t1\nq1\td2\n", ":2: expected 3 tab-separated columns (query-id, corpus-id, score), got 2"),
    ("q1\td1\t1\nq1\td1\t2\n", ":2: conflicting grade for document 'd1' (line 1 says 1) (id 'q1')"),
])
def test_bad_beir_qrels_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "qrels.tsv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert str(err.value).startswith(f"{path}{message}")


def test_beir_qrels_agree_with_the_beir_folder_reader(tmp_path):
    # Oracle: harness.datasets.beir.load_qrels_tsv (the BEIR folder reader) on the same valid files.
    rng = random.Random(7)
    for case in range(40):
        rows = {(f"q{rng.randint(0, 4)}", f"doc-{rng.randint(0, 30)}"): rng.choice([-1, 0, 1, 2, 1.5])
                for _ in range(rng.randint(1, 30))}
        end = rng.choice(["\n", "\r\n"])
        text = rng.choice(["", "query-id\tcorpus-id\tscore\n"]) + "".join(f"{q}\t{d}\t{g}{end}" for (q, d), g in rows.items())
        (tmp_path / "q.tsv").write_text(text, newline="")
        assert read_qrels(tmp_path / "q.tsv").to_dict() == load_qrels_tsv(tmp_path / "q.tsv").to_dict(), case


@pytest.mark.parametrize("text", ["q1 0 d1 inf\n", "q1 0 d1 -Infinity\n", "q1 0 d1 1e400\n", "q1\td1\tinf\n"])
def test_infinite_grades_are_refused(tmp_path, text):
    # An infinite gain makes nDCG inf / inf = NaN (it was read as inf and every NDCG@k printed nan);
    # trec_eval reads grades with atol (inf -> 0, 1e400 -> 1), pytrec_eval and ir_measures with int().
    path = tmp_path / "qrels"
    path.write_text(text)
    with pytest.raises(InputError, match=r"qrels:1: grade '.*' for document 'd1' is not finite \(id 'q1'\)"):
        read_qrels(path)


def _corrupt_gzip() -> bytes:
    """A gzip header, then a deflate block of the reserved type 3: zlib's "invalid block type"."""
    return gzip.compress(b"")[:10] + b"\xff" + bytes(16)


@pytest.mark.parametrize("name, read", [("run.trec.gz", read_run), ("qrels.gz", read_qrels)])
def test_corrupt_gzip_files_are_one_line_errors(tmp_path, name, read):
    # zlib.error is neither OSError nor EOFError: it escaped as a bare exception without the file name.
    path = tmp_path / name
    path.write_bytes(_corrupt_gzip())
    with pytest.raises(InputError, match=r"gz: cannot read (run|qrels) file: .*invalid block type"):
        read(path)


# --------------------------------------------------------------------------- writing
def test_query_ids_read_as_comments_are_not_written(tmp_path, writer):
    # A line whose first column starts with '#' is a comment to the reader (trec_eval 10): the query
    # "#1" was written and silently lost on reading back.
    with pytest.raises(ValueError, match=r"query id '#1' cannot be written .* read as a comment"):
        write_run(Run.from_dict({"#1": {"a": 1.0}, "q2": {"b": 2.0}}), tmp_path / "run.trec")
    with pytest.raises(ValueError, match=r"query id '#1' cannot be written .* read as a comment"):
        write_qrels(Qrels.from_rows([("#1", "a", 1.0), ("q2", "b", 1.0)]), tmp_path / "qrels")
    assert not (tmp_path / "run.trec").exists() and not (tmp_path / "qrels").exists()
    write_run(Run.from_dict({"q#1": {"#a": 1.0}}), tmp_path / "run.trec")  # '#' elsewhere is data
    assert read_run(tmp_path / "run.trec").to_dict() == {"q#1": {"#a": 1.0}}


@pytest.mark.parametrize("doc", ["d 1", "d\t1", "d\n1", "d\r1", "d\x0b1", ""])
def test_document_ids_that_would_not_read_back_are_refused(tmp_path, writer, doc):
    # "q1 Q0 d 1 1 5.0 t" reads back as document "d" scored 1 (its rank): NDCG@1 1.0 in-process, 0.0 from
    # the written run.trec. Refused, with a corpus's ids (IdColumn) as with Python strings.
    runs = [Run.from_dict({"q1": {doc: 5.0, "x": 1.0}}),
            Run.from_arrays(["q1"], np.array([0, 2]), np.array([1, 0]), np.array([5.0, 1.0]),
                            IdColumn(pa.array(["x", doc, "y"]).slice(0)))]
    for run in runs:
        with pytest.raises(ValueError, match=r"document id .* cannot be written to a TREC file"):
            write_run(run, tmp_path / "run.trec")
        assert not (tmp_path / "run.trec").exists()


def test_a_bad_document_id_the_run_does_not_retrieve_is_no_error(tmp_path, writer):
    column = IdColumn(pa.array(["a b", "", "x", "d\u00a01", "y"]).slice(2))  # U+00A0 stays inside an id
    run = Run.from_arrays(["q1"], np.array([0, 3]), np.array([0, 1, 2]), np.array([3.0, 2.0, 1.0]), column)
    write_run(run, tmp_path / "run.trec")
    assert read_run(tmp_path / "run.trec").to_dict() == {"q1": {"x": 3.0, "d\u00a01": 2.0, "y": 1.0}}
    vocab = np.array(["a b", "x"], dtype=object)
    write_run(Run.from_arrays(["q1"], np.array([0, 1]), np.array([1]), np.array([1.0]), vocab), tmp_path / "run.trec")
    assert read_run(tmp_path / "run.trec").to_dict() == {"q1": {"x": 1.0}}


@pytest.mark.parametrize("grade", [float("inf"), float("nan")])
def test_qrels_grades_that_would_be_refused_on_reading_are_not_written(tmp_path, grade):
    with pytest.raises(ValueError, match=r"grade .* cannot be written to a TREC file \(not finite\)"):
        # (built past the checks: Qrels and Qrels.from_rows refuse such grades themselves)
        write_qrels(Qrels._checked(object_array(["q1", "q1"]), object_array(["a", "b"]), np.array([1.0, grade])),
                    tmp_path / "qrels")
    assert not (tmp_path / "qrels").exists()
