"""The corpus stream's compiled parse (harness/native/jsonrows.c, ``harness._trecrun.string_rows``): where it
accepts a file, its columns are json.loads' values of each line (and pyarrow.json's columns); where it refuses
one, a load ends as it did with pyarrow.json and the line scan (the same corpus, or the same error)."""

from __future__ import annotations

import gzip
import json
import random

import pyarrow as pa
import pytest

from harness.datasets import beir, jsonl
from harness.errors import HarnessError

FIELDS = ("_id", "title", "text")

pytestmark = pytest.mark.skipif(jsonl._compiled_rows() is None, reason="harness._trecrun is not built")


def _collect(path, fields=FIELDS):
    batches = []
    ok = jsonl.stream_string_columns(path, fields, batches.append)
    return ok, (pa.Table.from_batches(batches).combine_chunks() if batches else None)


_PIECES = ["plain words", "", "caf\u00e9", "\u4e2d\u6587", "\U0001F600 face", 'quote " and \\ slash', "tab\there",
           "line\nbreak", "nul\x00byte", "\x7f del", "/ solidus", "\u2028 separator", "\b\f\r"]


def _string(rng) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randrange(4)))


def _value(rng, depth=0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return _string(rng)
    if kind == 1:
        return rng.choice([0, -7, 12345678901234567890, 1.5, -0.25e-3, 6.02e23])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4, 5):
        return rng.choice(["", "x", _string(rng)])
    if kind in (6, 7):
        return {_string(rng) or "k": _value(rng, depth + 1) for _ in range(rng.randrange(3))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]


def _line(rng, i: int, crlf: bool = False) -> str:
    obj = {"_id": f"d{i}" + rng.choice(["", "\u00e9", " x"])}
    for name in ("title", "text"):
        roll = rng.random()
        if roll < 0.7:
            obj[name] = _string(rng)
        elif roll < 0.85:
            obj[name] = None
    for extra in range(rng.randrange(3)):
        obj[rng.choice(["metadata", "url", "x", "\u00e9t\u00e9", "ids"])] = _value(rng)
    items = list(obj.items())
    rng.shuffle(items)
    sep = rng.choice([(", ", ": "), (",", ":"), (" ,\t", " :  ")])
    text = json.dumps(dict(items), ensure_ascii=rng.random() < 0.5, separators=sep)
    return rng.choice(["", " ", "\t"]) + text + rng.choice(["", " "] if crlf else ["", " ", "\r"])


@pytest.mark.parametrize("block", [7, 64, 1000, 2 << 20])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_columns_are_json_loads_values_of_each_line(tmp_path, monkeypatch, block, seed):
    """Random lines (fields in any order, missing or null; escapes, surrogate pairs and raw UTF-8; other keys
    holding nested values, numbers, literals; blanks around tokens, CRLF ends, a byte-order mark, no final
    LF), read in blocks that cut lines anywhere: each column is json.loads' value of each line's field, or
    null; and pyarrow.json's streaming parse gives the same table (in blocks it can read)."""
    rng, crlf = random.Random(seed), seed == 1
    lines = [_line(rng, i, crlf) for i in range(400)]
    body = ("\r\n" if crlf else "\n").join(lines) + rng.choice(["", "\n", "\n\n"])
    path = tmp_path / ("corpus.jsonl.gz" if seed == 2 else "corpus.jsonl")
    data = ("\ufeff" if seed == 0 else "").encode() + body.encode("utf-8")
    path.write_bytes(gzip.compress(data) if seed == 2 else data)
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block)
    ok, table = _collect(path)
    assert ok
    expected = [json.loads(line) for line in lines]
    for name in FIELDS:
        assert table.column(name).to_pylist() == [obj.get(name) for obj in expected]
    if block > 1000:  # (pyarrow.json refuses a line that runs past the next block)
        monkeypatch.setattr(jsonl, "_compiled_rows", lambda: None)
        ok, by_pyarrow = _collect(path)
        assert ok and by_pyarrow.equals(table)


def test_a_line_longer_than_many_blocks(tmp_path, monkeypatch):
    """A line that runs on over many reads (kept and finished by a later one), and the last line without its LF."""
    text = "word \u00e9 " * 5000
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"_id": "a", "text": "x"}) + "\n" + json.dumps({"_id": "b", "text": text}) + "\n"
                    + json.dumps({"_id": "c", "title": "t"}), encoding="utf-8")
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 100)
    ok, table = _collect(path)
    assert ok
    assert table.column("_id").to_pylist() == ["a", "b", "c"]
    assert table.column("text").to_pylist() == ["x", text, None]
    assert table.column("title").to_pylist() == [None, None, "t"]


def test_the_stream_does_not_use_pyarrow_json_where_the_parse_is_compiled(tmp_path, monkeypatch):
    """(On the code before it, the stream was pyarrow.json's: this fails there.)"""
    import pyarrow.json as pj

    def refuse(*args, **kwargs):
        raise AssertionError("pyarrow.json was used")

    monkeypatch.setattr(pj, "open_json", refuse)
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "1", "text": "a"}\n{"_id": "2", "title": "b"}\n', encoding="utf-8")
    ok, table = _collect(path)
    assert ok and table.column("_id").to_pylist() == ["1", "2"]


# each line is refused by the compiled parse; the file's load then ends as it did before (pyarrow.json, line scan)
REFUSED = [
    '{"_id": 5, "text": "a"}',  # a number where a string belongs
    '{"_id": "x", "title": true}',
    '{"_id": "x", "text": {"a": "b"}}',
    '{"_id": "x", "text": "lone \\ud800 high"}',
    '{"_id": "x", "text": "lone \\udc00 low"}',
    '{"_id": "x", "text": "pair \\ud83d\\u0041"}',
    '{"_id": "x", "text": "bad \\x escape"}',
    '{"_id": "x", "text": "short \\u12"}',
    '{"_id": "x", "text": "raw\ttab"}',
    '{"_id": "x", "text": "raw \x01 control"}',
    '{"_id": "x", "_id": "y"}',
    '{"_id": "x", "\\u005fid": "y"}',  # (the same key, escaped)
    '{"_id": "x", "text": "a",}',
    '{"_id": "x"} {"_id": "y"}',
    '{"_id": "x", "m": NaN}',
    '{"_id": "x", "m": 01}',
    '{"_id": "x", "m": 1.}',
    '{"_id": "x", "m": -}',
    '{"_id": "x", "m": .5}',
    '{"_id": "x", "m": +1}',
    '{"_id": "x", "m": 1e}',
    '{"_id": "x", "m": tru}',
    '{"_id": "x", "m": [1, 2,]}',
    '{"_id": "x", "m": {"a" 1}}',
    '{"_id": "x", "m": "unterminated}',
    '{"_id": "x" "text": "no comma"}',
    '{"_id": "x", "m": ' + "[" * 300 + "]" * 300 + "}",
]
# accepted by the compiled parse, refused by the corpus's load (an id missing): the same error as before
NO_ID = ['{"_id": null, "text": "a"}', '{"text": "no id"}', '{}']
RAW_REFUSED = [
    b'{"_id": "x", "text": "bad \xff byte"}',
    b'{"_id": "x", "text": "overlong \xc0\xaf"}',
    b'{"_id": "x", "text": "surrogate \xed\xa0\x80"}',
    b'{"_id": "x", "text": "cut \xe4\xb8"}',
    b'{"_id": "x", "m": "bad \xfe in another key"}',
    b'{"\xff": "bad key", "_id": "x"}',
]


def _outcome(path):
    try:
        corpus = beir.load_corpus(path)
    except (HarnessError, ValueError) as exc:
        return "error", str(exc)
    return "corpus", corpus.table.to_pydict()


@pytest.mark.parametrize("line", [s.encode("utf-8") for s in REFUSED + NO_ID] + RAW_REFUSED)
def test_a_refused_file_loads_as_before(tmp_path, monkeypatch, line):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "first", "text": "fine"}\n' + line + b"\n")
    assert _collect(path)[0] is (line.decode("utf-8", "replace") in NO_ID)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "new"))
    now = _outcome(path)
    monkeypatch.setattr(jsonl, "_compiled_rows", lambda: None)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "old"))
    assert now == _outcome(path)


@pytest.mark.parametrize("value", ["1e5", "-0", "0.5E-3", "123", "true", "false", "null", '""', "[]", "{}",
                                   '[1, "a", {"b": [null]}]', '"\\u00e9\\n\\/"', '"\\ud83d\\ude00"'])
def test_other_keys_values_are_skipped(tmp_path, value):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"m": ' + value + ', "_id": "x", "text": "t"}\n', encoding="utf-8")
    ok, table = _collect(path)
    assert ok and table.to_pydict() == {"_id": ["x"], "title": [None], "text": ["t"]}


def test_string_rows_keeps_an_unfinished_line():
    from harness.formats import native

    rows = native._built.string_rows
    count, columns, head = rows(("_id",), b"", b'{"_id": "a"}\n{"_i', False)
    assert count == 1 and head == b'{"_i'
    assert rows(("_id",), head, b'd": "b', False) == (0, None, b'{"_id": "b')
    count, columns, head = rows(("_id",), b'{"_id": "b', b'"}\n', True)
    assert count == 1 and columns[0][1] == b"b" and head == b""
    assert rows(("_id",), b"", b'{"_id": "a"}', True)[0] == 1
    assert rows(("_id",), b"", b'{"_id": "a"', True) is None
    assert rows(("_id",), b"", b'{"_id": "a"} x', True) is None


@pytest.mark.parametrize("refused", [False, True])
def test_the_content_digest_is_that_of_the_whole_content_read(tmp_path, monkeypatch, refused):
    """The compiled stream hashes each read on a thread of its own: the sha256 of the decompressed content (a
    byte-order mark included) once the whole file was read; none where the parse was refused."""
    import hashlib

    content = ("\ufeff" + "".join(json.dumps({"_id": f"d{i}", "text": "t " * i}) + "\n" for i in range(300))).encode()
    if refused:
        content += b'{"_id": 5}\n'
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(content))
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 999)
    with jsonl.ContentDigest(path) as digest:
        ok, _ = _collect(path)
    assert ok is not refused
    assert digest.hexdigest == (None if refused else hashlib.sha256(content).hexdigest())


def test_a_line_of_many_reads_is_gathered_in_place(tmp_path, monkeypatch):
    """A line over thousands of reads (4 MB in reads of 1 KiB) is gathered in one buffer that grows in place and
    handed to the parse once it ends, not at each read with the whole line so far (copies quadratic in its size)."""
    from harness.formats import native

    text = "x" * (4 << 20)
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"_id": "long", "text": text}) + "\n" + json.dumps({"_id": "b"}) + "\n", encoding="utf-8")
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 1024)
    calls = []
    built = native._built.string_rows

    def counting(fields, head, data, final):
        calls.append(len(head))
        return built(fields, head, data, final)

    monkeypatch.setattr(jsonl, "_compiled_rows", lambda: counting)
    ok, table = _collect(path)
    assert ok and table.column("text").to_pylist() == [text, None]
    assert len(calls) <= 3  # (the reads within the line went to the buffer, not to the parse)


_MUTATIONS = b'"\\{}[],: u0123456789eE-+.ntfrl\x00\x01\x1f\x7f\x80\xbf\xc0\xc3\xa9\xed\xa0\xf0\x9f\xff\t\r/b'


@pytest.mark.parametrize("seed", [0, 1])
def test_mutated_lines_are_refused_or_read_as_json_loads_reads_them(seed):
    """Random lines with bytes deleted, inserted, replaced or repeated (quotes, escapes, brackets, digits, control
    and non-UTF-8 bytes): a line that json.loads refuses (or reads as no object) is refused; one accepted has
    json.loads' string (or null) for each field. (An ad hoc run of 200,000 such lines found no exception.)"""
    import struct

    from harness.formats import native

    rng = random.Random(seed)
    accepted = refused = 0
    for i in range(3000):
        line = bytearray(_line(rng, i).encode("utf-8"))
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            op, at = rng.randrange(4), rng.randrange(len(line) + 1)
            if op == 0 and line:
                del line[min(at, len(line) - 1)]
            elif op == 1:
                line.insert(at, rng.choice(_MUTATIONS))
            elif op == 2 and line:
                line[min(at, len(line) - 1)] = rng.choice(_MUTATIONS)
            else:
                other = rng.randrange(len(line) + 1)
                line[at:at] = line[min(at, other):max(at, other)][:20]
        line = bytes(line).replace(b"\n", b" ")
        got = native._built.string_rows(FIELDS, b"", line + b"\n", True)
        try:
            expected = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            expected = None
        if got is None or got[0] == 0:  # (refused, or a blank line: no row)
            refused += 1
            assert got is None or not line.strip(b" \t\r")
            continue
        accepted += 1
        assert isinstance(expected, dict), line
        for name, (offsets, data, valid, _) in zip(FIELDS, got[1]):
            start, end = struct.unpack("<2i", offsets)
            value = None if valid is not None and not valid[0] & 1 else data[start:end].decode("utf-8")
            assert value == expected.get(name), (name, line)
    assert accepted > 500 and refused > 500  # (both sides exercised)
