"""Review tests of the impacts reader (retrievers/sparse/vectors.py): bad input is one InputError
naming the file and the line (docs/sparse.md: ``error: FILE:LINE: what``), never a bare traceback,
and a weight float32 holds is read."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from harness.errors import InputError
from retrievers.sparse.vectors import read_vectors


@pytest.mark.parametrize("field", ["id", "weight"])
def test_an_integer_of_more_than_4300_digits_is_an_input_error(tmp_path, field):
    # Python's json refuses integers of over 4,300 digits with a ValueError that has no .msg (not a
    # JSONDecodeError): the reader's ``exc.msg`` raised AttributeError, a traceback from the CLI
    huge = "1" + "0" * 5000
    line = '{"id": ' + huge + ', "vector": {"x": 1}}' if field == "id" else '{"id": "b", "vector": {"x": ' + huge + "}}"
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 1}}\n' + line + "\n")
    with pytest.raises(InputError, match=r"docs\.jsonl:2: not a JSON object \(Exceeds the limit \(4300 digits\)"):
        read_vectors(path, what="documents")


def test_a_line_nested_too_deeply_is_an_input_error(tmp_path):
    # json.loads raises RecursionError on ~100,000 nested arrays (an ignored field): it was uncaught
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 1}}\n{"id": "b", "vector": {"x": 1}, "contents": '
                    + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError) as info:
        read_vectors(path, what="documents")
    assert str(info.value).endswith("docs.jsonl:2: not a JSON object (nested too deeply)")


@pytest.mark.parametrize("gz", [False, True])
def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path, gz):
    # the bad byte is on line 3000, ~100 KB in: the error named no line, only the decoder's position
    # in its buffer ("position 1234"), which is not a position in the file
    lines = [f'{{"id": "d{i}", "vector": {{"term{i}": 1}}}}\n'.encode() for i in range(5000)]
    lines[2999] = b'{"id": "d2999", "vector": {"caf\xe9": 1}}\n'  # Latin-1 e-acute
    data = b"".join(lines)
    path = tmp_path / "docs.jsonl"
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(InputError) as info:
        read_vectors(path, what="documents")
    assert str(info.value) == f"{path}:3000: not UTF-8 text (invalid continuation byte)"


def test_float32_max_as_float32_prints_it_is_read(tmp_path):
    # FLT_MAX prints as 3.4028235e+38 (numpy's float32, Java's Float.toString): a decimal just above
    # FLT_MAX that rounds to it in float32 (numpy: np.float32(3.4028235e38) == FLT_MAX); it was refused
    # as "not a finite number" (checked |w| > FLT_MAX in float64). From FLT_MAX + 2**103 on, float32
    # rounds to infinity: refused.
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 3.4028235e+38, "y": -3.4028235e38}}\n')
    assert read_vectors(path, what="documents").weights.tolist() == [float(np.finfo(np.float32).max),
                                                                    -float(np.finfo(np.float32).max)]
    path.write_text('{"id": "a", "vector": {"x": 340282356779733661637539395458142568448}}\n')  # FLT_MAX + 2**103
    with pytest.raises(InputError, match=r"docs\.jsonl:1: a term weight is not a finite number \(id 'a'\)"):
        read_vectors(path, what="documents")
