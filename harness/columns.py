"""Helpers for columnar data."""

from __future__ import annotations

import math
import numbers
from itertools import repeat
from typing import Iterable, Mapping

import numpy as np


def object_array(values: Iterable[str]) -> np.ndarray:
    """A 1-d numpy object array of the given strings (never a fixed-width unicode array)."""
    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def require_strings(values: list, what: str) -> None:
    """TypeError naming the first of ``values`` that is not a str: ids are matched as strings, so an
    int ``1`` would silently never equal the id ``"1"`` (pytrec_eval refuses them likewise)."""
    if not all(map(isinstance, values, repeat(str))):
        bad = next(v for v in values if not isinstance(v, str))
        raise TypeError(f"{what} ids must be str, got {type(bad).__name__} {bad!r}")


def first_repeated(values: Iterable) -> tuple[object, int, int] | None:
    """``(value, its first position, the position it comes again at)`` for the first of ``values`` given a
    second time, in order; None when each is given once. For naming a repeated id in an error, after a
    cheaper check (``len(set(ids)) < len(ids)``) found one."""
    first: dict = {}
    for i, value in enumerate(values):
        at = first.setdefault(value, i)
        if at != i:
            return value, at, i
    return None


def require_mapping(value, call: str, shape: str) -> None:
    """TypeError naming ``call`` unless ``value`` is BEIR's nested dict ``shape`` (a mapping of mappings):
    a list, or a query's documents as a list, failed with ``'list' object has no attribute ...``."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{call} takes BEIR's {shape} dict, got {type(value).__name__}")
    bad = next((q for q, docs in value.items() if not isinstance(docs, Mapping)), None)
    if bad is not None:
        shown = repr(value[bad])
        raise TypeError(f"{call} takes BEIR's {shape} dict; query {bad!r} holds {type(value[bad]).__name__} "
                        f"{shown if len(shown) <= 60 else shown[:57] + '...'}, not a {{doc_id: value}} dict")


def real_array(values: list, labels: Iterable[tuple[str, str]], what: str, finite: bool = False) -> np.ndarray:
    """``values`` as float64 when each is a real number (int, float, bool, numpy's, Fraction; not a
    str, bytes, None, complex or Decimal, which NumPy would read as a number or NaN where pytrec_eval
    refuses them), and with ``finite`` not NaN or infinite; else a TypeError (not a number) or a
    ValueError (past a double's range, not finite) naming ``what`` and the (query, document) of
    ``labels`` (one per value, in order) at the first bad value."""
    kinds = set(map(type, values))
    if kinds <= {float, int} or all(issubclass(kind, numbers.Real) for kind in kinds):
        try:
            array = np.array(values, dtype=np.float64)
        except OverflowError:
            array = None
        if array is not None and (not finite or np.isfinite(array).all()):
            return array
    for (query_id, doc_id), value in zip(labels, values):
        shown = f"{value!r:.60}" if isinstance(value, float) else f"{type(value).__name__} {value!r:.60}"
        where = f"{what} of query {query_id!r}, document {doc_id!r}"
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{where} is not a number: {shown}")
        try:
            number = float(value)
        except OverflowError:
            raise ValueError(f"{where} is past a double's range: {shown}") from None
        if finite and not math.isfinite(number):
            raise ValueError(f"{where} is not a finite number: {shown}")
    raise AssertionError("unreachable")  # pragma: no cover


def is_utf8_text(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8: False for a str holding a lone surrogate (JSON's
    ``"\\ud800"``, an API caller's string), which no Arrow column, file or UTF-8 reader can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def inverse_permutation(permutation: np.ndarray) -> np.ndarray:
    """The int64 array ``inv`` with ``inv[permutation[i]] = i`` (ranks from a sort order, and back)."""
    inverse = np.empty(len(permutation), dtype=np.int64)
    inverse[permutation] = np.arange(len(permutation), dtype=np.int64)
    return inverse


# Arrow arrays built from their buffers: ``pyarrow.array`` imports pandas on its first call (to
# recognise pandas objects), which costs a whole-process run ~0.25 s it need not pay.
def arrow_int64(values: np.ndarray):
    """numpy int64 -> a null-free Arrow int64 array (zero-copy)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def arrow_strings(values) -> "pyarrow.StringArray":  # noqa: F821
    """Python strings (a list or an object array) -> a null-free Arrow string array."""
    import pyarrow as pa

    values = values.tolist() if isinstance(values, np.ndarray) else list(values)
    text = "".join(values)
    data = text.encode("utf-8")
    if len(data) == len(text):  # ASCII: a string's length in bytes is its length
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    else:
        lengths = np.fromiter((len(v.encode("utf-8")) for v in values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
    return pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))


def string_buffers(array, widen: bool = True) -> tuple[np.ndarray, object]:
    """(offsets, UTF-8 data buffer) of a null-free Arrow string or large_string array, as sliced
    (``b""`` for an array without data): what compiled code reads a column from. The offsets are an
    int64 copy, or with ``widen=False`` a view of the array's own (int32 for a string array)."""
    import pyarrow as pa

    _, offsets, data = array.buffers()
    width = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(offsets, dtype=width)[array.offset:array.offset + len(array) + 1]
    return (offsets.astype(np.int64) if widen else offsets), (data if data is not None else b"")


def all_distinct(column) -> bool:
    """Whether the values of a null-free Arrow string (or large_string) array or chunked array are all
    distinct: :func:`distinct_order`'s first value."""
    return distinct_order(column)[0]


def distinct_order(column) -> tuple[bool, np.ndarray | None]:
    """(whether the values of a null-free Arrow string (or large_string) array or chunked array are all
    distinct, their positions in string order (int64) when they are and it was computed, else None).
    Sorted by the compiled radix sort (:func:`harness.formats.native.string_order`, which keeps equal values
    side by side), then each value compared with the next (:func:`harness.formats.native.first_repeat`, in C:
    no gather of the values in that order, no import of ``pyarrow.compute``): 1M corpus ids ~0.04 s, where
    ``pyarrow.compute.unique`` (a hash table, one thread) takes ~0.2 s at the end of a cold load. The order is
    the one ``Corpus.id_order`` sorts (a corpus load hands it over: its ids are not sorted twice).
    ``pyarrow.compute.unique`` where the compiled code is not built (or ids past 2 GB of text): no order."""
    import pyarrow as pa

    from harness.formats import native

    if isinstance(column, pa.ChunkedArray):
        try:
            column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        except (pa.ArrowInvalid, pa.ArrowCapacityError):  # (string offsets past 2^31 bytes)
            return _unique_count(column) == len(column), None
    if not native.available():
        return _unique_count(column) == len(column), None
    buffers = string_buffers(column, widen=False)
    order = native.string_order(*buffers)
    if native.first_repeat(*buffers, order) >= 0:  # (each value compared with the next in that order, in C)
        return False, None
    return True, order


def _unique_count(column) -> int:
    import pyarrow.compute as pc

    return len(pc.unique(column))


def arrow_contains(column, values: list[str]) -> list[bool] | None:
    """Whether each of ``values`` is a value of the null-free Arrow string (or large_string) array or
    chunked array ``column``, by the compiled ``harness._trecrun.present_ids`` (no Python string per
    value of the column, no pyarrow.compute import: ~0.06 s of a warm whole run); None when it is not
    built or the column is not such an array (the caller then uses ``pyarrow.compute.is_in``)."""
    import pyarrow as pa

    from harness.formats import native

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if not native.available() or column.null_count or not all(
            pa.types.is_string(c.type) or pa.types.is_large_string(c.type) for c in chunks):
        return None
    return native.present_ids([string_buffers(chunk, widen=False) for chunk in chunks if len(chunk)], values)


class IdColumn:
    """Distinct ids held as one null-free Arrow string (or large_string) array: a corpus's ``_id``
    column as a run's vocabulary (``Run.doc_vocab``) without a Python string per id. Compiled code
    reads :meth:`buffers` (the TREC formatter, binary search of ids); :meth:`objects`, the object
    array of the ids, is made on first use only (1M ids: ~0.1 s and ~60 MB; 8.8M: ~0.9 s) and kept:
    by ``make_objects()`` when given (a corpus's ``id_array``, so that both are one array), else from
    the Arrow array. Pickles as its Arrow array."""

    __slots__ = ("array", "_objects", "_buffers", "_make_objects")

    def __init__(self, array, make_objects=None):
        import pyarrow as pa

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)) or array.null_count:
            raise TypeError(f"an IdColumn is a null-free Arrow string array, got {array.type}")
        self.array = array
        self._objects = None
        self._buffers = None
        self._make_objects = make_objects

    def __len__(self) -> int:
        return len(self.array)

    def __reduce__(self):
        return IdColumn, (self.array,)

    def objects(self) -> np.ndarray:
        """The ids as an object array of str (made once)."""
        if self._objects is None:
            made = None if self._make_objects is None else self._make_objects()
            if made is not None and len(made) != len(self.array):
                raise ValueError("make_objects gave another number of ids")
            self._objects = object_array(self.array.to_pylist()) if made is None else made
        return self._objects

    def buffers(self) -> tuple[np.ndarray, object]:
        """(offsets, UTF-8 data): :func:`string_buffers` of the array (made once), the offsets the
        array's own (int32, or int64 for a large_string array), not copied."""
        if self._buffers is None:
            self._buffers = string_buffers(self.array, widen=False)
        return self._buffers
