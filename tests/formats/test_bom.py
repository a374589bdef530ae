"""A leading UTF-8 byte-order mark (a Windows editor's) in a TREC run or qrels file is dropped, as the
JSONL and BEIR qrels readers drop it: kept, it made the first query id '\\ufeffq1', so that query's first
line (its top document, in a run) was filed under another query (trec_eval reads it so too)."""

from __future__ import annotations

import gzip

import pytest

from harness.errors import InputError
from harness.formats import native
from harness.formats.trec import read_qrels, read_run

BOM = b"\xef\xbb\xbf"
RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 0.5 t\n"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("gz", [False, True])
def test_a_run_with_a_byte_order_mark_reads_as_without(tmp_path, monkeypatch, compiled, gz):
    if not compiled:
        monkeypatch.setattr(native, "available", lambda: False)
    plain, marked = tmp_path / "plain.trec", tmp_path / ("marked.trec.gz" if gz else "marked.trec")
    plain.write_bytes(RUN)
    marked.write_bytes(gzip.compress(BOM + RUN) if gz else BOM + RUN)
    a, b = read_run(plain), read_run(marked)
    assert b.query_ids.tolist() == a.query_ids.tolist() == ["q1", "q2"]
    assert b.offsets.tolist() == [0, 2, 3] and b.doc_vocab[b.doc_codes].tolist() == ["d1", "d2", "d3"]
    assert b.scores.tolist() == [2.0, 1.0, 0.5]


def test_qrels_with_a_byte_order_mark_read_as_without(tmp_path):
    for name, body in (("q.trec", QRELS), ("q.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n")):
        (tmp_path / name).write_bytes(BOM + body)
        qrels = read_qrels(tmp_path / name)
        assert sorted(set(qrels.query_ids.tolist())) == ["q1", "q2"], name


def test_a_bad_line_after_a_byte_order_mark_keeps_its_number(tmp_path):
    (tmp_path / "r.trec").write_bytes(BOM + b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 x t\n")
    with pytest.raises(InputError, match=r"r\.trec:2:"):
        read_run(tmp_path / "r.trec")
