"""harness.columns: Arrow arrays built from buffers, equal to pyarrow.array's, without importing pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import arrow_int64, arrow_strings


@pytest.mark.parametrize("values", [[], [""], ["doc1", "", "d 2"], ["naïve", "café", "β-catenin", "x", "日本"]])
def test_arrow_strings_equal_pyarrow_array(values):
    for given in (values, np.array(values, dtype=object)):
        built = arrow_strings(given)
        built.validate(full=True)
        assert built.equals(pa.array(values, pa.string())) and built.to_pylist() == values


def test_arrow_int64_is_zero_copy_and_equal():
    values = np.array([3, -1, 2**40], dtype=np.int64)
    built = arrow_int64(values)
    assert built.to_pylist() == [3, -1, 2**40] and built.type == pa.int64()
    assert built.buffers()[1].address == values.ctypes.data


def test_building_arrays_does_not_import_pandas():
    """pyarrow.array imports pandas on first use (~0.25 s of a whole run); these helpers do not."""
    code = ("import sys, numpy as np; from harness.columns import arrow_int64, arrow_strings; "
            "arrow_strings(['a', 'é']).take(arrow_int64(np.array([1, 0]))); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
