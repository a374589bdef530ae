"""Run-file scale review: a bad line deep in a large run is named without reading every line in Python.

The compiled reader gave up on a bad line or a repeated (query, document) pair by returning None, and
the whole file was then read again by the Python line reader to name the line: a 10M-line run (316
MB) with a bad score at line 9,999,999 took 87 s and 2.0 GB peak RSS before
``error: bad.run:9999999: score '1,5' is not a number (id 'd1196192')``, a document repeated at the
end 103 s (``harness evaluate``, this project's shared 2-CPU machine). The compiled reader now says
where it gave up (``native.Refused``) and only that line is read by the line reader's rules: 5.7 s
and 6.6 s, the same messages.

Expected values: the line reader (``trec.read_run_lines``, the reference grammar that names every bad
line); these tests require the same error, and that the whole-file line reader is not called.
"""

from __future__ import annotations

import random

import pytest

from harness.errors import InputError
from harness.formats import native, trec

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled run reader is not built")


def _expected(data: bytes, path) -> str:
    with pytest.raises(InputError) as info:
        trec.read_run_lines(data, path)
    return str(info.value)


def _located(data: bytes, path, monkeypatch, parts: int) -> str:
    """read_run's error, with the file cut into ``parts`` and the whole-file line reader forbidden."""
    path.write_bytes(data)

    def whole_file(*_):
        raise AssertionError("the whole file was read line by line to name the bad line")

    monkeypatch.setattr(native, "_threads", lambda size: parts)
    monkeypatch.setattr(trec, "read_run_lines", whole_file)
    with pytest.raises(InputError) as info:
        trec.read_run(path)
    monkeypatch.undo()
    return str(info.value)


def _lines(rng: random.Random, n_queries: int = 30, depth: int = 40) -> list[bytes]:
    lines = []
    for q in range(n_queries):
        for r, d in enumerate(rng.sample(range(10_000), depth)):
            sep = rng.choice([b" ", b"\t", b"  ", b" \t"])
            end = rng.choice([b"\n", b"\r\n", b" \n"])
            lines.append(sep.join([b"q%d" % q, b"Q0", b"d%d" % d, b"%d" % (r + 1), b"%r" % (10 - r / 7), b"t"]) + end)
    return lines


BAD_LINES = [
    b"q1 Q0 dx 1 1,5 t\n",          # score not a number (C's atof would read 1)
    b"q1 Q0 dx 1 1_0 t\n",          # (Python's float would read 10)
    b"q1 Q0 dx 1 nan t\n",          # NaN
    b"q1 Q0 dx 1 2.5\n",            # 5 columns
    b"q1 Q0 d\xffx 1 2.5 t\n",      # not UTF-8
    b"q1 Q0 dx\r1 2.5 t\n",         # a lone CR
    b"q1 Q0 dx 1 1.00000000000000000000001e999999x t\n",  # past the fast path, then refused
]


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("bad", BAD_LINES)
def test_a_bad_line_is_named_from_where_the_compiled_reader_stopped(tmp_path, monkeypatch, bad, parts):
    rng = random.Random(BAD_LINES.index(bad) * 10 + parts)
    for where in (0, 517, 1199):  # first line, inside, last line
        lines = _lines(rng)
        lines.insert(where, bad)
        if where == 517:  # a second bad line after the first: the first is named
            lines.insert(900, b"q2 Q0 dy 1 oops t\n")
        data = b"".join(lines)
        path = tmp_path / "run.trec"
        assert _located(data, path, monkeypatch, parts) == _expected(data, path)


@pytest.mark.parametrize("parts", [1, 3])
def test_a_repeated_pair_is_named_as_the_line_reader_names_it(tmp_path, monkeypatch, parts):
    rng = random.Random(parts)
    path = tmp_path / "run.trec"
    for _ in range(20):
        lines = _lines(rng)
        for _ in range(rng.randrange(1, 4)):  # repeats: inside a query, or a query coming back later
            line = rng.choice(lines)
            lines.insert(rng.randrange(len(lines) + 1), line.replace(b"Q0", b"Q0 ", 1))
        data = b"".join(lines)
        want = _expected(data, path)
        assert "document retrieved twice" in want
        assert _located(data, path, monkeypatch, parts) == want


def test_a_nul_anywhere_is_named_before_an_earlier_bad_line(tmp_path, monkeypatch):
    """The line reader refuses a NUL anywhere first (trec_eval stops reading there); so does this."""
    lines = _lines(random.Random(5))
    lines.insert(3, b"q1 Q0 dx 1 1,5 t\n")
    lines.insert(1000, b"q1 Q0 dz 1 1.5 t\x00\n")
    data = b"".join(lines)
    path = tmp_path / "run.trec"
    want = _expected(data, path)
    assert "NUL byte" in want and ":1001:" in want
    assert _located(data, path, monkeypatch, 3) == want


def test_the_compiled_reader_says_where_it_stopped():
    data = b"q Q0 d 1 1.0 t\nq Q0 e 1 x t\nq Q0 d 1 3 t\n"
    assert native.read_run_native(data, locate=True) == native.Refused(data.index(b"q Q0 e"), -1)
    assert native.read_run_native(data) is None  # (without locate: None, as before)
    data = b"q Q0 d 1 1.0 t\nq Q0 e 1 2 t\nq Q0 d 1 3 t\n"
    assert native.read_run_native(data, locate=True) == native.Refused(data.rindex(b"d 1 3"), data.index(b"d 1 1"))
