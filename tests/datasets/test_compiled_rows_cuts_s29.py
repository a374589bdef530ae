"""The compiled corpus parse (harness/native/jsonrows.c) over whole files cut into reads anywhere: files of
several lines, some mutated (bytes deleted, inserted, replaced, repeated), some blank, some deeply nested or
long, LF or CRLF, with or without a last newline, handed to ``string_rows`` in up to six pieces, each call
carrying the unfinished line of the last (its ``head``). Cut or not, the outcome is the same: the file refused
as a whole, or each of its non-blank lines one row holding json.loads' string (or null) for each field asked for. (An ad hoc run of 320,000 such files under AddressSanitizer found no report and no difference.)"""

from __future__ import annotations

import json
import random
import struct

import pytest

from tests.datasets.test_compiled_rows_s28 import _MUTATIONS, _line

native = pytest.importorskip("harness.formats.native")
if native._built is None:  # pragma: no cover - the extension is built wherever there is a compiler
    pytest.skip("the compiled run-file module is not built", allow_module_level=True)

FIELD_SETS = [("_id", "title", "text"), ("_id", "text"), ("text",), ("title", "_id", "text", "extra")]


def _mutated(rng: random.Random, line: bytes) -> bytes:
    line = bytearray(line)
    for _ in range(rng.choice([1, 1, 2, 4])):
        op, at = rng.randrange(4), rng.randrange(len(line) + 1)
        if op == 0 and line:
            del line[min(at, len(line) - 1)]
        elif op == 1:
            line.insert(at, rng.choice(_MUTATIONS + b"\n"))
        elif op == 2 and line:
            line[min(at, len(line) - 1)] = rng.choice(_MUTATIONS + b"\n")
        else:
            other = rng.randrange(len(line) + 1)
            line[at:at] = line[min(at, other):max(at, other)][:50]
    return bytes(line)


def _file(rng: random.Random, case: int) -> bytes:
    lines = []
    for j in range(rng.randrange(1, 8)):
        kind = rng.random()
        if kind < 0.1:
            lines.append(b"")
        elif kind < 0.15:  # nesting past the parse's limit, balanced or not
            lines.append(b'{"a": ' + b"[" * rng.randrange(200, 300) + b"]" * rng.randrange(0, 300) + b"}")
        elif kind < 0.2:  # a long id
            lines.append(b'{"_id": "' + b"x" * rng.randrange(0, 5000) + b'", "text": "t"}')
        elif kind < 0.3:
            lines.append(_mutated(rng, _line(rng, case * 8 + j).encode("utf-8")))
        else:
            lines.append(_line(rng, case * 8 + j).encode("utf-8"))
    newline = rng.choice([b"\n", b"\r\n"])
    return newline.join(lines) + (newline if rng.random() < 0.7 else b"")


def _parse(fields, data: bytes, cuts: list[int]):
    """(number of rows, {field: values}) from string_rows over ``data`` cut at ``cuts``, or None (refused)."""
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    head, count, values = b"", 0, {name: [] for name in fields}
    for i, piece in enumerate(pieces):
        got = native._built.string_rows(fields, head, piece, i == len(pieces) - 1)
        if got is None:
            return None
        n, columns, head = got
        count += n
        for name, (offsets, text, valid, _) in zip(fields, columns or ()):
            ends = struct.unpack(f"<{n + 1}i", offsets)
            values[name] += [None if valid is not None and not valid[r // 8] >> (r % 8) & 1
                             else text[ends[r]:ends[r + 1]].decode("utf-8") for r in range(n)]
    return count, values


def _expected(fields, data: bytes):
    """(number of rows, {field: values}) as json.loads reads each non-blank line, or None where one is no object."""
    rows = []
    for line in data.split(b"\n"):
        if not line.strip(b" \t\r"):
            continue
        try:
            row = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if not isinstance(row, dict):
            return None
        rows.append(row)
    return len(rows), {name: [row.get(name) for row in rows] for name in fields}


@pytest.mark.parametrize("seed", [0, 1])
def test_files_cut_into_reads_are_refused_or_read_as_json_loads_reads_each_line(seed):
    rng = random.Random(seed)
    accepted = refused = 0
    for case in range(700):
        fields = rng.choice(FIELD_SETS)
        data = _file(rng, case)
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randrange(0, 6))))
        got = _parse(fields, data, cuts)
        assert got == _parse(fields, data, []), (fields, cuts, data[:300])  # the cuts change nothing
        if got is None:
            refused += 1
            continue
        accepted += 1
        expected = _expected(fields, data)
        assert expected is not None, data[:300]  # accepted only what json.loads reads as objects
        assert got == expected, (fields, cuts, data[:300])
    assert accepted > 150 and refused > 150  # (both sides exercised)
