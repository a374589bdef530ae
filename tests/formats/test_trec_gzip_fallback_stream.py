"""The pure-Python run reader (no compiled ``_trecrun``: pyarrow.csv, harness/formats/columnar.py) reads a
``.gz`` run from the buffer that ``_decompressed`` fills 1 MB at a time, as the compiled reader does; it
was given ``GzipFile.read()``'s bytes, which joins its chunks into a copy: twice the decompressed size
at that step (tracemalloc, here: >= 2.0x before, about 1.1x now). The oracle of the values: the same
bytes read uncompressed, and by the compiled reader where it is built."""

from __future__ import annotations

import gzip
import tracemalloc

import pytest

from harness.formats import columnar, native, trec


def _run_bytes(lines: int, tag: bytes = b"tag") -> bytes:
    return b"".join(b"q%d Q0 d%07d %d %d.25 %s\n" % (i // 1000, i, i % 1000 + 1, 1000 - i % 1000, tag)
                    for i in range(lines))


def test_the_fallback_reader_gets_the_gz_run_without_a_second_copy(tmp_path, monkeypatch):
    data = _run_bytes(100_000, b"x" * 60)  # ~9 MB
    (tmp_path / "run.trec").write_bytes(data)
    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(data, 1))
    monkeypatch.setattr(native, "available", lambda: False)
    monkeypatch.setattr(trec, "_GZIP_CHUNK", 1 << 16)
    plain = trec.read_run(tmp_path / "run.trec").to_dict()
    seen = {}
    parse = columnar.read_run_columns

    def read_run_columns(read):
        given = read()
        seen.update(peak=tracemalloc.get_traced_memory()[1], given=type(given))
        del given
        return parse(read)

    monkeypatch.setattr(columnar, "read_run_columns", read_run_columns)
    tracemalloc.start()
    try:
        run = trec.read_run(tmp_path / "run.trec.gz")
    finally:
        tracemalloc.stop()
    assert seen["peak"] < 1.5 * len(data), (seen["peak"], len(data))  # (GzipFile.read(): >= 2x)
    assert run.to_dict() == plain


@pytest.mark.parametrize("text", [
    b"q1 Q0 d1 1 3.0 t\r\nq1 Q0 d2 2 2.0 t\r\n",  # CRLF
    b"# ir_metadata\nq1\tQ0\td1\t1\t3.0\tt\nq2  Q0 d2 1   2.5 t \n",  # a comment line, tabs, runs of spaces
    b"q1 Q0 d1 1 3.0 t\nq1 Q0 d1 2 2.0 t\n",  # a pair twice: refused by the line reader
])
def test_the_fallback_reads_a_gz_run_as_the_plain_file(tmp_path, monkeypatch, text):
    (tmp_path / "r.trec").write_bytes(text)
    (tmp_path / "r.trec.gz").write_bytes(gzip.compress(text))

    def outcome(name):
        try:
            return trec.read_run(tmp_path / name).to_dict()
        except trec.InputError as exc:
            return str(exc).replace(str(tmp_path / name), "FILE")

    compiled = [outcome("r.trec"), outcome("r.trec.gz")] if native.available() else []
    monkeypatch.setattr(native, "available", lambda: False)
    fallback = [outcome("r.trec"), outcome("r.trec.gz")]
    assert fallback[1] == fallback[0]
    assert compiled in ([], fallback)
