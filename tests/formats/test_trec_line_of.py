"""``line_of`` (harness/formats/trec.py): the line an error about an id names, found as the run reader
reads lines. Worked examples: ``q1 Q0 d1 ...`` on line 4 after a comment line and a blank line; a
``#`` line holding the id is skipped (the reader skips it); columns split on ASCII whitespace only
(U+00A0 stays inside an id, as trec_eval and the reader keep it); a byte-order mark is not part of
the first query id."""

from __future__ import annotations

import gzip

from harness.formats.trec import line_of, read_run

TEXT = "\ufeffq0 Q0 x\u00a0y 1 2.0 t\n# q1 Q0 d1\n\nq1 Q0 d1 1 1.0 t\nq1\tQ0\tx 2 0.5 t\n".encode()


def test_lines_are_found_as_the_reader_reads_them(tmp_path):
    (tmp_path / "r.trec").write_bytes(TEXT)
    (tmp_path / "r.trec.gz").write_bytes(gzip.compress(TEXT))
    for path in (tmp_path / "r.trec", tmp_path / "r.trec.gz"):
        assert line_of(path, 2, "d1") == 4
        assert line_of(path, 2, "x") == 5  # (not line 1's 'x\u00a0y')
        assert line_of(path, 2, "x\u00a0y") == 1
        assert line_of(path, 0, "q0") == 1
        assert line_of(path, 2, "nowhere") is None
    assert line_of("<stdin>", 2, "d1", TEXT) == 4
    assert read_run(tmp_path / "r.trec").to_dict() == {"q0": {"x\u00a0y": 2.0}, "q1": {"d1": 1.0, "x": 0.5}}
    assert line_of("-", 2, "d1") is None  # (standard input is not read again)
    assert line_of(tmp_path / "missing", 2, "d1") is None
