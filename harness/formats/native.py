"""The compiled run reader and line formatter (``harness._trecrun``, C source in harness/native/trecrun.c).

One pass over a run file's bytes: lines split, columns found, ids checked as UTF-8, scores read as
Python's ``float`` reads them, queries grouped, and the document ids interned in string order by a
radix sort; see the C file's header for the exact grammar. Like the pyarrow reader
(:mod:`harness.formats.columnar`) it returns None on anything it does not take exactly, and the
line reader then accepts the file or names the bad line. The formatter writes exactly the bytes of
the Python one (``harness.formats.trec._run_lines``), its distinct scores formatted on one thread
per CPU. The extension is optional (built when a C
compiler is there at install time); ``HARNESS_TREC_COMPILED=0`` turns it off.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from harness.columns import IdColumn, object_array
from harness.run import Run

try:
    from harness import _trecrun as _built
except ImportError:  # not built (no C compiler at install time)
    _built = None

SWITCH = "HARNESS_TREC_COMPILED"


def available() -> bool:
    """Whether the compiled reader and formatter are built and not turned off with ``HARNESS_TREC_COMPILED=0``."""
    return _built is not None and os.environ.get(SWITCH, "1") != "0"


def _cpus() -> int:
    """The CPUs this process may use (at most 16)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 16))


def _threads(size: int) -> int:
    """Parts to cut a file of ``size`` bytes into: one per CPU this process may use, each of 4 MB or more."""
    return max(1, min(_cpus(), size >> 22))


def present_ids(columns: list[tuple[np.ndarray, object]], ids: list[str]) -> list[bool]:
    """Whether each id is one of the values of the Arrow string arrays given as (offsets, data), the
    offsets int32 or int64 (harness.columns.arrow_contains)."""
    return _built.present_ids(columns, ids)


def repeated_entry(offsets: np.ndarray, codes: np.ndarray, n_vocab: int) -> int:
    """The position of the first entry whose document (code) its query already listed, or -1: one pass
    (``Run.repeated_entry``)."""
    return _built.repeated_entry(np.ascontiguousarray(offsets, dtype=np.int64),
                                 np.ascontiguousarray(codes, dtype=np.int64), int(n_vocab))


def string_order(offsets: np.ndarray, data) -> np.ndarray:
    """The int64 positions of an Arrow string array's values (its int32 or int64 offsets and UTF-8
    data) in byte order, which is code point order; equal values keep their order (stable): what
    ``pyarrow.compute.sort_indices`` gives, by a radix sort on the values' bytes."""
    return np.frombuffer(_built.string_order(np.ascontiguousarray(offsets), data), dtype=np.int64)


def first_repeat(offsets: np.ndarray, data, order: np.ndarray) -> int:
    """The first rank ``r >= 1`` whose value (of an Arrow string array: its int32 or int64 offsets and UTF-8
    data) at ``order[r]`` equals the one at ``order[r - 1]``, or -1 (``order``: :func:`string_order`'s):
    whether the values are all distinct."""
    return _built.first_repeat(np.ascontiguousarray(offsets), data, np.ascontiguousarray(order, dtype=np.int64))


def find_ranked(offsets: np.ndarray, data, order: np.ndarray, ids: list[str]) -> np.ndarray:
    """The int64 code of each id among an Arrow string array's values (its int32 or int64 offsets
    and UTF-8 data), -1 where absent, by binary search over ``order`` (the code at each rank of the
    values in string order): ``Run.codes_of`` over an IdColumn vocabulary."""
    return np.frombuffer(_built.find_ranked(np.ascontiguousarray(offsets), data,
                                            np.ascontiguousarray(order, dtype=np.int64), ids), dtype=np.int64)


class Refused(NamedTuple):
    """Where the compiled reader gave up on a file (``read_run_native(..., locate=True)``): ``at``, a byte
    offset inside the first line it refused (``first`` -1), or for a document listed twice for a query,
    the offsets of the repeat that comes first in the file and of its earlier occurrence (``first``)."""
    at: int
    first: int


def read_run_native(data, threads: int | None = None, locate: bool = False) -> Run | Refused | None:
    """The canonical run that ``data`` (a run file's bytes, or an mmap of them) holds, or None when the
    line reader must read it; with ``locate``, :class:`Refused` where the reader gave up on a line or a
    repeated pair (so that only that line need be read again). ``threads``: parts to cut the file into
    (default: one per CPU, 4 MB each at least)."""
    parsed = _built.read_run(data, _threads(len(data)) if threads is None else threads, int(locate))
    if parsed is None:
        return None
    if len(parsed) == 2:
        return Refused(*parsed)
    query_ids, offsets, codes, scores, vocab, width = parsed
    # (a list of str when fixed-width ids would take far more than the file: one long id among many)
    vocab = object_array(vocab) if isinstance(vocab, list) else np.frombuffer(vocab, dtype=f"U{width}")
    return Run.from_arrays(query_ids, np.frombuffer(offsets, dtype=np.int64), np.frombuffer(codes, dtype=np.int64),
                           np.frombuffer(scores, dtype=np.float64), vocab, vocab_sorted=True).canonical()


def run_lines_function(run: Run):
    """``lines(run, first, last, tag)``: the TREC lines of ``run``'s queries ``first:last`` as UTF-8
    bytes, formatted in C (as ``trec._run_lines`` does in Python). The document ids go to C as a
    list: the whole vocabulary when that is cheaper (an object array's list only references its
    strings: ~6x cheaper per id than picking the run's entries), else each block's own ids; an
    IdColumn vocabulary (a corpus's ids) goes as its Arrow buffers, no Python string made."""
    source = run.vocab_source
    if isinstance(source, IdColumn):  # a corpus's ids: read in place from its Arrow buffers
        whole = source.buffers()
    else:
        per_id = 8 if source.dtype == object else 1
        whole = source.tolist() if len(source) <= per_id * len(run.doc_codes) else None

    def lines(run: Run, first: int, last: int, tag: str) -> bytes:
        start, end = int(run.offsets[first]), int(run.offsets[last])
        codes = run.doc_codes[start:end]
        if whole is None:
            vocab, codes = run.doc_vocab[codes].tolist(), np.arange(end - start, dtype=np.int64)
        else:
            vocab = whole
        return _built.format_lines(run.query_ids[first:last].tolist(), run.offsets[first:last + 1] - start,
                                   np.ascontiguousarray(codes, dtype=np.int64),
                                   np.ascontiguousarray(run.scores[start:end], dtype=np.float64), vocab, tag,
                                   _cpus())

    return lines
