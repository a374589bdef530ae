"""Fast columnar reading of TREC runs: pyarrow.csv straight into a :class:`Run`.

The exact grammar lives in :mod:`harness.formats.trec` (the line reader, which names the line of
every error). This module reads the common case column-wise at Arrow speed and gives up (returns
None) on anything it does not accept exactly as the line reader would; the caller then reads the
file line by line, which accepts it or reports the bad line. The steps:

1. bytes: a lone CR or a NUL byte -> give up; CRLF -> LF; ``#`` comment lines removed; tabs,
   vertical tabs and form feeds -> spaces, and then runs of spaces -> one and spaces at line edges
   removed. Only ASCII whitespace separates columns (U+00A0 and other Unicode spaces stay inside ids,
   as in trec_eval). A file with spaces only is parsed as it is first (the two-byte searches cost
   more than the parse); an empty field or uneven columns send it through the normalization once.
2. pyarrow.csv, streamed in 4 MB blocks, with a single-space delimiter, no quoting, no null values:
   the query and document columns as strings, the score as float64 (a score such as ``1_0`` fails the
   conversion -> give up), the other three read as bytes only to check that they are non-empty and
   dropped batch by batch. Every row must have the first row's number of columns (>= 6; extra
   columns ignored), else give up.
3. Document ids and query ids are interned in string order, so that ties can be broken by comparing
   codes. Ids must be ASCII for that (else give up). Each id's bytes are NUL-padded to the longest
   id (give up when that takes more than 64 MiB and 4 times the ids' bytes: :data:`PADDED_AT`); when
   the ids pack into 64 bits together with their positions (each character as its rank among the
   characters used: ids of digits up to ~10 characters for millions of rows), a single
   integer sort orders them; otherwise the padded bytes are sorted as big-endian 64-bit words.
4. A NaN score or a (query, document) pair given twice -> give up (the line reader names the line).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from harness.columns import arrow_int64
from harness.run import Run

_SPACES = bytes.maketrans(b"\t\x0b\x0c", b"   ")
# Padded ids past this many bytes, and past 4 times the ids' own bytes, are left to the line reader:
# one id of 1,000 characters among 100,000 short ones (a 2.5 MB run) padded them all to 95 MB and
# made a 381 MiB fixed-width vocabulary; a longer id or run, a MemoryError on a valid file.
PADDED_AT = 1 << 26


def _normalized(data: bytes, collapse: bool) -> bytes | None:
    """No comment lines, CRLF as LF, tabs as spaces; with ``collapse`` (or when there were tabs), one
    space between columns and none at line edges. None when the line reader must decide.

    Only single-byte searches (memchr) run on a plain file; runs of spaces are found after parsing,
    as empty fields, and the file is then normalized again with ``collapse``.
    """
    if b"\x00" in data:
        return None
    if b"\r" in data:
        if data.count(b"\r") != data.count(b"\r\n"):
            return None  # a lone CR: refused with its line by the line reader
        data = data.replace(b"\r\n", b"\n")
    if b"\t" in data or b"\x0b" in data or b"\x0c" in data:
        data, collapse = data.translate(_SPACES), True
    if collapse:
        while b"  " in data:
            data = data.replace(b"  ", b" ")
        if data.startswith(b" ") or b"\n " in data:
            data = data.replace(b"\n ", b"\n").lstrip(b" ")
        if data.endswith(b" ") or b" \n" in data:
            data = data.replace(b" \n", b"\n").rstrip(b" ")
    if b"#" in data and (data.startswith(b"#") or b"\n#" in data):
        data = _without_comment_lines(data)
    return data


def _without_comment_lines(data: bytes) -> bytes:
    """Drop every line starting with ``#`` (comment lines are few: ir_metadata headers)."""
    starts = [0] if data.startswith(b"#") else []
    at = data.find(b"\n#")
    while at >= 0:
        starts.append(at + 1)
        at = data.find(b"\n#", at + 1)
    pieces, kept_from = [], 0
    for start in starts:
        pieces.append(data[kept_from:start])
        end = data.find(b"\n", start)
        kept_from = len(data) if end < 0 else end + 1
    pieces.append(data[kept_from:])
    return b"".join(pieces)


def _intern(column, with_first: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """(codes, vocabulary, first position of each id if ``with_first``) with the vocabulary in string
    order; None unless every id is ASCII."""
    raw = _padded_bytes(column)
    return None if raw is None else _intern_padded(raw, with_first)


def _padded_bytes(column) -> np.ndarray | None:
    """Each id's bytes, NUL-padded to the longest id (an (n, width) uint8 array); None unless every id
    is ASCII and some id is non-empty. Built chunk by chunk: one padded chunk exists at a time."""
    import pyarrow.compute as pc

    if len(column) == 0 or not pc.all(pc.string_is_ascii(column)).as_py():
        return None
    lengths = pc.binary_length(column)
    width = int(pc.max(lengths).as_py())
    if width == 0:
        return None
    if len(column) * width > max(PADDED_AT, 4 * int(pc.sum(lengths).as_py())):
        return None  # one long id pads every id to its length (the line reader keeps each id's own)
    raw = np.empty((len(column), width), dtype=np.uint8)
    at = 0
    for chunk in getattr(column, "chunks", [column]):
        padded = pc.utf8_rpad(chunk, width=width, padding="\x00")
        offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32, count=len(padded) + 1, offset=4 * padded.offset)
        raw[at:at + len(padded)] = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[
            offsets[0]:offsets[-1]].reshape(-1, width)
        at += len(padded)
        del padded, offsets
    return raw


def _intern_padded(raw: np.ndarray, with_first: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`_intern` of the ids that ``raw`` holds (see :func:`_padded_bytes`)."""
    width = raw.shape[1]
    order, new, first = _sorted_by_packed_keys(raw)
    if order is None:
        order, new, first = _sorted_by_words(raw)
    ranks = np.cumsum(new, dtype=np.int64)
    del new
    ranks -= 1
    codes = np.empty(len(raw), dtype=np.int64)
    codes[order] = ranks
    del ranks, order
    vocab = raw[first].astype(np.uint32).view(f"U{width}").ravel()  # ASCII bytes as code points; padding dropped
    return codes, vocab, first if with_first else None


def _sorted_by_packed_keys(raw: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(positions in string order, whether each sorted position starts a new id, first position of
    each id), or Nones when the ids do not pack into 64 bits with their positions.

    Each byte is replaced by its rank among the bytes the ids use (padding NUL first: rank 0), so a
    whole id packs into ``width x bits`` bits in string order; with the position in the low bits,
    one plain sort of integers orders the ids and carries the argsort with it (ids of digits up to
    8 characters: 4 bits a character).
    """
    n, width = raw.shape
    present = np.zeros(256, dtype=bool)
    present[raw.ravel()] = True
    present[0] = False
    rank = np.zeros(256, dtype=np.uint8)
    used = np.flatnonzero(present)
    rank[used] = np.arange(1, len(used) + 1)
    bits, position_bits = max(len(used).bit_length(), 1), max((n - 1).bit_length(), 1)
    if width * bits + position_bits > 64:
        return None, None, None
    keys = np.zeros(n, dtype=np.uint64)
    for j in range(width):
        keys <<= np.uint64(bits)
        keys |= rank[raw[:, j]]
    keys <<= np.uint64(position_bits)
    keys |= np.arange(n, dtype=np.uint64)
    keys.sort()
    order = np.bitwise_and(keys, np.uint64((1 << position_bits) - 1)).view(np.int64)  # (< 2**63: same values)
    keys >>= np.uint64(position_bits)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return order, new, order[new]  # (equal keys sort by position: the first comes first)


def _sorted_by_words(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`_sorted_by_packed_keys` for any ASCII ids: the bytes zero-padded to a multiple of 8,
    viewed as big-endian words (numeric order = byte order = string order), sorted word by word."""
    n, width = raw.shape
    padded = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = raw
    words = padded.view(">u8").astype(np.uint64)
    del padded
    if words.shape[1] == 1:
        order = np.argsort(words[:, 0])  # (np.unique's inverse and first index sort stably: slower)
    else:
        order = np.lexsort(words.T[::-1])  # first word primary
    ordered = words[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    return order, new, np.minimum.reduceat(order, np.flatnonzero(new))


def read_run_columns(read: Callable[[], bytes]) -> Run | None:
    """The run that ``read()`` returns (a whole TREC run file's bytes), or None when the line reader
    must read it. The bytes are dropped once parsed, before the ids are interned."""
    import pyarrow as pa

    table = _parse(read(), collapse=False)
    if table is None:  # runs of spaces: normalize and parse again
        table = _parse(read(), collapse=True)
    if table is None or table is False:
        return None
    scores = np.concatenate([_values(chunk, np.float64) for chunk in table["f4"].chunks])
    if np.isnan(scores).any():
        return None
    try:
        queries = _query_blocks(table["f0"].combine_chunks())
        raw = _padded_bytes(table["f2"])
        del table  # (memory: each column is dropped as soon as it has been used)
        pa.default_memory_pool().release_unused()  # (else the pool keeps the parsed columns' memory)
        docs = None if raw is None else _intern_padded(raw)
        del raw
    except pa.ArrowException:  # e.g. more than 2 GB of ids in one column
        return None
    if queries is None or docs is None:
        return None
    query_codes, query_ids = queries
    doc_codes, doc_vocab, _ = docs
    if np.any(query_codes[1:] < query_codes[:-1]):
        regroup = np.argsort(query_codes, kind="stable")
        query_codes, doc_codes, scores = query_codes[regroup], doc_codes[regroup], scores[regroup]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(query_codes, minlength=len(query_ids)))])
    if _has_repeated_pair(offsets, query_codes, doc_codes, len(doc_vocab)):
        return None
    return Run.from_arrays(query_ids.tolist(), offsets, doc_codes, scores, doc_vocab, vocab_sorted=True).canonical()


def _parse(data: bytes, collapse: bool):
    """The query, document and score columns; None to try again with ``collapse`` (an empty field or
    uneven columns: runs of spaces or spaces at a line edge), False when only the line reader can
    read the file."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    data = _normalized(data, collapse)
    if data is None:
        return False
    first_line = data[:data.find(b"\n")] if b"\n" in data else data
    if len(first_line.split(b" ")) < 6:
        return False
    tag = pa.binary()  # columns only checked for being non-empty (binary: no UTF-8 check, no hashing)
    batches = []
    try:
        reader = pcsv.open_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 22),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(
                include_columns=[f"f{i}" for i in range(6)], null_values=[], strings_can_be_null=False,
                column_types={"f0": pa.string(), "f1": tag, "f2": pa.string(), "f3": tag, "f4": pa.float64(),
                              "f5": tag}))
        for batch in reader:  # (streamed: only the three columns used are kept, batch by batch)
            if any(pc.min(pc.binary_length(batch[name])).as_py() == 0 for name in ("f0", "f1", "f2", "f3", "f5")):
                return False if collapse else None  # an empty field: runs of spaces or spaces at a line edge
            batches.append(batch.select(["f0", "f2", "f4"]))
    except (pa.ArrowInvalid, KeyError):
        return False if collapse else None
    del data
    if not sum(len(batch) for batch in batches):
        return False
    return pa.Table.from_batches(batches)


def _query_blocks(column) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes, query ids) with queries numbered in first-seen order.

    Runs list each query's lines together: the ids are then read off where the column changes,
    with no sort; queries split over several blocks are interned by sorting.
    """
    import pyarrow.compute as pc

    changes = _values(pc.indices_nonzero(pc.not_equal(column[1:], column[:-1])), np.uint64).astype(np.int64) + 1
    starts = np.concatenate([[0], changes])
    ids = np.array(column.take(arrow_int64(starts)).to_pylist(), dtype=object)
    if len(set(ids.tolist())) == len(ids):
        return np.repeat(np.arange(len(starts), dtype=np.int32), np.diff(np.append(starts, len(column)))), ids
    interned = _intern(column, with_first=True)
    if interned is None:
        return None
    codes, ids, first = interned
    order = np.argsort(first, kind="stable")  # first-seen order
    rename = np.empty_like(order)
    rename[order] = np.arange(len(order))
    return rename[codes], ids[order]


def _values(array, dtype) -> np.ndarray:
    """A null-free primitive Arrow array as numpy, zero-copy (pyarrow's to_numpy may import pandas)."""
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * np.dtype(dtype).itemsize)


def _has_repeated_pair(offsets: np.ndarray, query_codes: np.ndarray, doc_codes: np.ndarray, n_docs: int) -> bool:
    """Whether a query lists a document twice (entries grouped by query, ``offsets`` their bounds)."""
    depths = np.diff(offsets)
    if len(depths) and (depths == depths[0]).all():  # equal depths: sort each query's row (much cheaper)
        rows = np.sort(doc_codes.reshape(len(depths), -1), axis=1)
        return bool(np.any(rows[:, 1:] == rows[:, :-1]))
    keys = np.sort(query_codes.astype(np.int64) * max(n_docs, 1) + doc_codes)
    return bool(np.any(keys[1:] == keys[:-1]))
