"""Term-weight vectors: read from Pyserini's JsonVectorCollection JSONL (plain or gzip), held as
flat columns.

One JSON object a line: ``{"id": "D1", "vector": {"term": weight, ...}}`` (``"_id"`` is accepted
for the id, BEIR style; other fields such as ``"contents"`` are ignored). Queries use the same
shape. Blank lines are skipped. Anything else is an :class:`harness.errors.InputError` naming the
file, the line and the id.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.columns import is_utf8_text
from harness.errors import InputError


@dataclass
class Vectors:
    """Rows of term weights: row i's terms are ``term_ids[offsets[i]:offsets[i + 1]]``, numbered
    in ``terms``; ``lines`` are the rows' 1-based line numbers in ``path``."""

    path: Path
    ids: list[str]
    lines: np.ndarray    # int64 (n_rows)
    offsets: np.ndarray  # int64 (n_rows + 1)
    term_ids: np.ndarray  # int32 (n_entries)
    weights: np.ndarray   # float32 (n_entries)
    terms: list[str]

    def row_of(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.ids)}


def _open(path: Path, errors: str = "strict"):
    with open(path, "rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    return (gzip.open(path, "rt", encoding="utf-8", errors=errors) if gz
            else open(path, encoding="utf-8", errors=errors))


def _undecodable_line(path: Path) -> int | None:
    """The number of the first line of ``path`` that is not UTF-8 (counted as the reader counts), or
    None: read again only once the reader has met bytes that do not decode (the decoder's error
    gives a position in its buffer, not in the file)."""
    try:
        with _open(path, errors="surrogateescape") as handle:  # (undecodable bytes become lone surrogates)
            for n, line in enumerate(handle, 1):
                if not is_utf8_text(line):
                    return n
    except (OSError, EOFError, zlib.error):
        pass
    return None


def read_vectors(path: str | Path, vocabulary: list[str] | None = None, what: str = "vector") -> Vectors:
    """The rows of ``path``. Terms are numbered in first-seen order in a new vocabulary, or, with
    ``vocabulary`` (term id -> term), looked up in it: terms it lacks get id -1 (they match nothing).
    Duplicate ids, a missing id or vector, and weights that are not finite numbers are errors."""
    path = Path(os.path.expanduser(path))
    if not path.is_file():
        raise InputError(f"{what} file not found", path)
    ids: list[str] = []
    lines: list[int] = []
    counts: list[int] = []
    keys: list[str] = []
    values: list = []
    seen: dict[str, int] = {}
    try:
        with _open(path) as handle:
            for n, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as exc:  # (an integer of over 4,300 digits: a ValueError without .msg)
                    raise InputError(f"not a JSON object ({getattr(exc, 'msg', exc)})", path, n) from None
                except RecursionError:
                    raise InputError("not a JSON object (nested too deeply)", path, n) from None
                if not isinstance(obj, dict):
                    raise InputError("not a JSON object", path, n)
                ident = obj.get("id", obj.get("_id"))
                if not isinstance(ident, (str, int)) or isinstance(ident, bool):
                    raise InputError('no "id" (or "_id") string', path, n)
                ident = str(ident)
                vector = obj.get("vector")
                if not isinstance(vector, dict):
                    raise InputError('no "vector" object of term weights', path, n, ident)
                if ident in seen:
                    raise InputError(f"duplicate id (first on line {seen[ident]})", path, n, ident)
                if "\\u" in line and not is_utf8_text("".join(vector)):  # legal JSON, not UTF-8 text (Arrow's terms)
                    raise InputError("a term holds a lone surrogate escape (\\ud800-\\udfff): not valid Unicode "
                                     "text", path, n, ident)
                seen[ident] = n
                ids.append(ident)
                lines.append(n)
                counts.append(len(vector))
                keys.extend(vector.keys())
                values.extend(vector.values())
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path, _undecodable_line(path)) from None
    except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a damaged gzip stream
        raise InputError(f"cannot read {what} file: {exc}", path) from None
    weights = _weights(values, counts, path, lines, ids)
    offsets = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))]).astype(np.int64)
    term_ids, terms = _term_ids(keys, vocabulary)
    return Vectors(path, ids, np.asarray(lines, dtype=np.int64), offsets, term_ids, weights, terms)


def _term_ids(keys: list[str], vocabulary: list[str] | None) -> tuple[np.ndarray, list[str]]:
    """Term ids of ``keys`` (Arrow's hash-based dictionary encoding, in C): numbered in first-seen
    order, or looked up in ``vocabulary`` (-1 for terms it lacks)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = pa.array(keys, type=pa.large_string())
    if vocabulary is None:
        encoded = column.dictionary_encode()
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32), encoded.dictionary.to_pylist()
    found = pc.index_in(column, value_set=pa.array(vocabulary, type=pa.large_string()))
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32), list(vocabulary)


def _weights(values: list, counts: list[int], path: Path, lines: list[int], ids: list[str]) -> np.ndarray:
    """``values`` as float32, or an error naming the first row holding a non-number or non-finite weight.
    Only JSON numbers are weights (Python int or float, not bool; numpy would parse a string "1.5").
    A weight is beyond float32's range when it rounds to infinity there: ``|w| >= FLT_MAX + 2**103``
    (half a unit in the last place above FLT_MAX; 3.4028235e38, FLT_MAX as float32 prints, rounds to it)."""
    limit = float(np.finfo(np.float32).max) + 2.0 ** 103  # (exact in float64)
    try:
        if not all(type(v) is float or type(v) is int for v in values):
            raise TypeError
        weights = np.asarray(values, dtype=np.float64)  # an int beyond float64: OverflowError
        if weights.ndim != 1:
            raise TypeError
        bad = ~np.isfinite(weights) | (np.abs(weights) >= limit)
    except (TypeError, ValueError, OverflowError):
        bad = np.array([not (type(v) is float or type(v) is int) or (type(v) is float and not math.isfinite(v))
                        or abs(v) >= limit for v in values], dtype=bool)  # (int vs float compares exactly)
        weights = None
    if bad.any():
        row = int(np.searchsorted(np.cumsum(counts), int(np.argmax(bad)), side="right"))
        raise InputError("a term weight is not a finite number", path, lines[row], ids[row])
    return weights.astype(np.float32)
