"""harness._trecrun.first_repeat: the first rank whose value equals the one before it in string order (the
corpus load's duplicate-id check, in C: no gather of the ids in that order, no pyarrow.compute)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import distinct_order, string_buffers
from harness.formats import native

pytestmark = pytest.mark.skipif(not native.available(), reason="harness._trecrun is not built")


def _first(values, large=False):
    array = pa.array(values, type=pa.large_string() if large else pa.string())
    buffers = string_buffers(array, widen=False)
    return native.first_repeat(*buffers, native.string_order(*buffers))


@pytest.mark.parametrize("large", [False, True])
def test_the_rank_of_the_first_value_equal_to_the_one_before(large):
    # string order of ["b", "a", "c", "a"]: a (1), a (3), b (0), c (2): rank 1 repeats rank 0
    assert _first(["b", "a", "c", "a"], large) == 1
    assert _first(["b", "a", "c"], large) == -1
    assert _first(["x", "xy", "x\u00e9", "xy"], large) == 2  # x, xy, xy, x\u00e9 (byte order)
    assert _first(["", "a", ""], large) == 1
    assert _first([], large) == -1 and _first(["only"], large) == -1
    assert _first(["ab", "a", "b"], large) == -1  # (a prefix is not a repeat)


def test_a_sliced_array_and_a_wrong_order():
    array = pa.array(["dup", "a", "b", "a", "z"]).slice(2)  # b, a, z: distinct once sliced
    buffers = string_buffers(array, widen=False)
    assert native.first_repeat(*buffers, native.string_order(*buffers)) == -1
    with pytest.raises(ValueError, match="another length"):
        native.first_repeat(*buffers, np.arange(2))
    with pytest.raises(ValueError, match="out of range"):
        native.first_repeat(*buffers, np.array([0, 1, 3]))


def test_distinct_order_compares_in_c_without_pyarrow_compute():
    """(The check before gathered the ids in order and compared them with pyarrow.compute, whose import alone
    cost ~0.04 s at the end of a cold load: this fails there.)"""
    code = ("import sys, numpy as np, pyarrow as pa; from harness.columns import distinct_order\n"
            "def strings(values):\n"
            "    data = ''.join(values).encode()\n"
            "    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.int32)\n"
            "    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)])\n"
            "ids = pa.chunked_array([strings([f'd{i}' for i in range(k, k + 500)]) for k in (0, 500)])\n"
            "ok, order = distinct_order(ids); dup = distinct_order(pa.chunked_array([strings(['a', 'b', 'a'])]))\n"
            "print(ok, order[:3].tolist(), dup, 'pyarrow.compute' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # string order of d0..d999: d0, d1, d10, ...
    assert out == ["True", "[0,", "1,", "10]", "(False,", "None)", "False"]
    assert distinct_order(pa.chunked_array([pa.array(["b", "a"])]))[1].tolist() == [1, 0]
