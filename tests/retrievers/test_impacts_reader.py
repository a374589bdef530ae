"""The impacts reader (retrievers/sparse/vectors.py) on damaged or mistyped input: each mistake is an
InputError naming the file, the line and the id (the CLI prints it on one line, exit 2), never a
bare traceback, and only JSON numbers are accepted as weights (docs/sparse.md)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from harness.errors import InputError
from retrievers.sparse.vectors import read_vectors


def test_a_damaged_gzip_stream_is_an_input_error(tmp_path):
    # a gzip header followed by a deflate block of the reserved type 3: zlib.error "invalid block type"
    good = gzip.compress(b'{"id": "a", "vector": {"x": 1}}\n', mtime=0)
    path = tmp_path / "docs.jsonl.gz"
    path.write_bytes(good[:10] + b"\xff" * 16 + good[-8:])
    with pytest.raises(InputError, match=r"docs\.jsonl\.gz: cannot read documents file: .*invalid block type"):
        read_vectors(path, what="documents")


def test_an_integer_weight_beyond_float64_is_not_a_finite_number(tmp_path):
    # json reads 1 followed by 400 zeros as a Python int, which numpy cannot make a float64 (OverflowError)
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 1}}\n{"id": "b", "vector": {"x": 2, "y": 1' + "0" * 400 + "}}\n")
    with pytest.raises(InputError) as info:
        read_vectors(path, what="documents")
    assert str(info.value).endswith("docs.jsonl:2: a term weight is not a finite number (id 'b')")


@pytest.mark.parametrize("weight", ['"1.5"', '" 2 "', "true", "null", "[1]"])
def test_a_weight_that_is_not_a_json_number_is_refused(tmp_path, weight):
    # numpy turns the string "1.5" into 1.5; a JSON string is not a weight (docs/sparse.md: JSON numbers)
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 1, "y": 0.5}}\n{"id": "b", "vector": {"x": ' + weight + "}}\n")
    with pytest.raises(InputError) as info:
        read_vectors(path, what="documents")
    assert str(info.value).endswith("docs.jsonl:2: a term weight is not a finite number (id 'b')")


def test_integer_and_float_weights_up_to_the_float32_range_are_read(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": {"x": 3, "y": -0.25, "z": 3e38}}\n{"id": "b", "vector": {"x": '
                    + str(10 ** 39) + "}}\n")
    with pytest.raises(InputError, match=r"docs\.jsonl:2: a term weight is not a finite number \(id 'b'\)"):
        read_vectors(path, what="documents")  # 1e39 is beyond float32's range
    path.write_text('{"id": "a", "vector": {"x": 3, "y": -0.25, "z": 3e38}}\n')
    vectors = read_vectors(path, what="documents")
    assert vectors.weights.tolist() == [3.0, -0.25, float(np.float32(3e38))]
