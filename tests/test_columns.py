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


@pytest.mark.parametrize("seed", range(4))
def test_arrow_contains_is_membership_in_the_column(seed, monkeypatch):
    """arrow_contains (compiled) answers as a Python set of the column's values does: string and
    large_string arrays, sliced, chunked, empty strings, non-ASCII ids, ids longer than 8 bytes that
    share their last 8 (present_ids' filter key) but not their start, repeated and absent probes;
    None when the compiled helper is off (the caller then uses pyarrow.compute)."""
    from harness.columns import arrow_contains
    from harness.formats import native

    if not native.available():
        pytest.skip("harness._trecrun is not built")
    rng = np.random.default_rng(seed)
    words = (["", "a", "é", "日本", "doc1", "doc10", "doc100", "x y", "12345678", "a-12345678", "b-12345678",
              "é-12345678", "MED-10-12345678"] + [f"d{i}" for i in range(300)]
             + [f"passage-{i:08d}" for i in range(0, 3000, 7)])  # long ids: same last 8 bytes, other starts
    for _ in range(50):
        values = list(dict.fromkeys(rng.choice(words, size=int(rng.integers(0, 200))).tolist()))
        array = pa.array(values, type=pa.large_string() if rng.random() < 0.5 else pa.string())
        if len(array) > 4:
            array = array.slice(2, len(array) - 3)
        cut = len(array) // 3
        column = pa.chunked_array([array.slice(0, cut), array.slice(cut)], type=array.type) if rng.random() < .5 else array
        probes = rng.choice(words + ["absent", "doc1000", "c-12345678", "passage-00000001"],
                            size=int(rng.integers(0, 40))).tolist()
        want = set(column.to_pylist())
        assert arrow_contains(column, probes) == [p in want for p in probes]
    monkeypatch.setenv("HARNESS_TREC_COMPILED", "0")
    assert arrow_contains(pa.array(["a"]), ["a"]) is None


def test_present_ids_takes_int32_and_int64_offsets_and_refuses_bad_ones():
    """present_ids reads each column's offsets as given (int32 or int64, no widened copy) and one
    table of the ids serves every column; offsets that fall, pass the data's end or are not 4- or
    8-byte items are refused."""
    from harness.formats import native

    if not native.available():
        pytest.skip("harness._trecrun is not built")
    data = b"aabbbcdddddddddd"  # "aa", "bbb", "c", "dddddddddd"
    offsets = [0, 2, 5, 6, 16]
    for width in (np.int32, np.int64):
        columns = [(np.array(offsets, width), data), (np.array([0, 1], width), b"z")]
        assert native.present_ids(columns, ["bbb", "z", "dddddddddd", "b", "", "aa"]) == [True, True, True, False,
                                                                                         False, True]
    assert native.present_ids([], ["a"]) == [False]
    for bad in ([0, 3, 2, 16], [0, 2, 5, 6, 17], [-1, 2]):
        with pytest.raises(ValueError, match="out of order or past the data"):
            native.present_ids([(np.array(bad, np.int64), data)], ["aa"])
    with pytest.raises(ValueError, match="int32 or int64"):
        native.present_ids([(np.array(offsets, np.int16), data)], ["aa"])
    with pytest.raises(TypeError, match="tuples"):
        native.present_ids([np.array(offsets, np.int64)], ["aa"])


@pytest.mark.parametrize("seed", range(3))
def test_string_order_is_arrows_stable_sort(seed):
    """native.string_order (a radix sort on 8-byte words of the values' UTF-8) gives the positions
    pyarrow.compute.sort_indices gives: embedded NUL bytes and values that are prefixes of others
    (zero padding must not tie them), non-ASCII, empty values, long shared prefixes (runs of equal
    words over 24, sorted a word deeper), repeats in their given order; int32 and int64 offsets,
    sliced arrays; bad offsets refused."""
    import pyarrow.compute as pc

    from harness.columns import string_buffers
    from harness.formats import native

    if not native.available():
        pytest.skip("harness._trecrun is not built")
    rng = np.random.default_rng(seed)
    alphabet = ["a", "b", "\x00", "é", "𝄞", "z", "0", "ab", "\x00\x00", "ÿ"]
    for case in range(150):
        values = ["".join(rng.choice(alphabet, int(rng.integers(0, 12)))) for _ in range(int(rng.integers(0, 300)))]
        if case % 3 == 0:
            values = ["passage-0000" + v for v in values]  # 12 shared bytes: every first word equal
        if case % 4 == 0:
            values += values[: len(values) // 2]
        kind = pa.large_string() if case % 2 else pa.string()
        array = pa.array(["pad"] + values + ["pad"], type=kind).slice(1, len(values))
        got = native.string_order(*string_buffers(array, widen=False))
        assert got.tolist() == pc.sort_indices(array).to_numpy().tolist()
    # over 24 values with one padded word, told apart by length only (a NUL tail; the empty value)
    tails = ["ab\x00", "ab", "ab\x00\x00", "", "\x00", "passage-0000ab", "passage-0000ab\x00"] * 9
    array = pa.array(tails)
    assert native.string_order(*string_buffers(array, widen=False)).tolist() == pc.sort_indices(array).to_numpy().tolist()
    with pytest.raises(ValueError, match="out of order or past the data"):
        native.string_order(np.array([0, 2, 1], np.int64), b"abc")
    with pytest.raises(ValueError, match="out of order or past the data"):
        native.string_order(np.array([0, 2, 9], np.int32), b"abc")


def test_string_order_of_values_sharing_a_long_prefix_runs_in_bounded_stack():
    """Values sharing more than 128 bytes are merge-sorted past that depth instead of going a word
    deeper per 8 shared bytes (~2 KB of stack a word: 30 values sharing 30,000 bytes overflowed the
    8 MiB main stack and crashed the process; a thread of 256 KiB crashed at 1,000 bytes). Same
    stable order as pyarrow.compute.sort_indices, on the main thread and on a small-stack thread,
    with repeats, prefixes of one another and NUL tails among them."""
    import threading

    import pyarrow.compute as pc

    from harness.columns import string_buffers
    from harness.formats import native

    if not native.available():
        pytest.skip("harness._trecrun is not built")
    rng = np.random.default_rng(7)
    shared = "p" * 30_000
    values = [shared + "%02d" % i for i in range(30)][::-1]
    values += [shared, shared + "\x00", shared[:200] + "q", shared + "07", shared[:129], shared[:127]] * 3
    values += [shared[:130] + "".join(rng.choice(["a", "b", "\x00"], int(rng.integers(0, 20)))) for _ in range(200)]
    rng.shuffle(values)
    array = pa.array(values)
    want = pc.sort_indices(array).to_numpy().tolist()
    assert native.string_order(*string_buffers(array, widen=False)).tolist() == want
    got = []
    size = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=lambda: got.append(native.string_order(*string_buffers(array, widen=False))))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    assert got[0].tolist() == want


# all_distinct: the duplicate-id check of a corpus load (sorted by the compiled radix sort, each id then
# compared with the next), against pyarrow.compute.unique as the oracle.
@pytest.mark.parametrize("values, expected", [
    (["d1", "d2", "d3"], True),
    (["b", "a", "c", "a"], False),           # the repeat far from its first place: adjacent once sorted
    (["a", "ab", "a\x00", "ab\x00"], True),  # prefixes and a NUL: different bytes, different ids
    (["é", "e", "e\u0301"], True),            # no Unicode normalisation: three ids
    (["x" * 20 + "1", "x" * 20 + "2", "x" * 20 + "1"], False),  # equal past the radix sort's first words
    ([], True),
    (["only"], True),
    (["", ""], False),
])
def test_all_distinct(values, expected):
    import pyarrow as pa
    import pyarrow.compute as pc

    from harness.columns import all_distinct

    array = pa.array(values, type=pa.string())
    assert (len(pc.unique(array)) == len(array)) is expected  # (the oracle agrees with the table)
    assert all_distinct(array) is expected
    assert all_distinct(array.cast(pa.large_string())) is expected
    assert all_distinct(pa.chunked_array([array[:1], array[1:]], type=pa.string())) is expected


def test_all_distinct_sliced_and_chunked_random_ids():
    """Random ids with one repeat planted across chunks, and sliced arrays (an offset into the buffers):
    the answer is pyarrow.compute.unique's every time."""
    import numpy as np
    import pyarrow as pa

    from harness.columns import all_distinct

    rng = np.random.default_rng(7)
    for trial in range(40):
        ids = [f"doc{int(v)}" for v in rng.choice(10**6, size=2_000, replace=False)]
        if trial % 2:
            ids[int(rng.integers(1_000, 2_000))] = ids[int(rng.integers(0, 1_000))]
        chunks = [pa.array(ids[:700]), pa.array(ids[700:1500]), pa.array(ids[1500:])]
        assert all_distinct(pa.chunked_array(chunks)) is (trial % 2 == 0)
        whole = pa.array(["pad"] + ids + ["pad"])
        assert all_distinct(whole.slice(1, len(ids))) is (trial % 2 == 0)  # (the pads are a repeat outside it)
        assert all_distinct(whole) is False
