"""On-disk cache of documents' term weights (a sparse matrix), written in chunks so that an
interrupted encode resumes; the sparse counterpart of retrievers/dense/cache.py (same key
function, same layout ideas).

One entry per key (model files' sha256, corpus content hash, max active dims; see
:func:`retrievers.dense.cache.cache_key`), in ``<cache dir>/sparse/doc-<key>/``::

    meta.json             what the key was made of, rows, chunk size (written first)
    versions.json         the versions of the libraries that encoded its rows (sentence-transformers,
                          transformers, torch), recorded before a part is written, as the embedding
                          cache's (:func:`retrievers.dense.cache.record_versions`)
    part-2048-000000.npz  one chunk of rows of the encoding order (lengths, term ids, weights; named
                          by chunk size and chunk number), while the encode is under way
    weights.npz           all rows in corpus order, once complete (the parts are then removed)
    complete.json         rows, entries and the size and sha256 of weights.npz (written last)

Every file is written to a temporary name and renamed (harness.atomic; a killed process's temporary
files are removed by the next build). A part that cannot be read
(npz members carry a CRC) or does not fit is encoded again; a part's name holds its chunk size, so
a process filling the same entry with another chunk size at the same time never takes the other's
part i (other documents) for its own. The complete entry is checked against complete.json (size,
sha256) and for consistency (lengths sum to the entries, term ids >= 0); a mismatch raises
:class:`CacheCorrupt` and the caller discards and rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from harness.atomic import atomic_open, remove_abandoned, write_json
from harness.checksums import sha256
from harness.columns import inverse_permutation
from retrievers.dense.cache import FORMAT_VERSION, record_versions, recorded_versions


_TAKE_BLOCK = 1 << 16  # rows gathered at a time by SparseRows.take


class CacheCorrupt(Exception):
    """A complete cache entry does not match its record."""


@dataclass
class SparseRows:
    """Rows of a sparse matrix: row i's entries are ``[offsets[i], offsets[i + 1])`` of
    ``term_ids`` (int32, ascending within a row) and ``weights`` (float32, non-zero)."""

    lengths: np.ndarray   # int64 (n_rows)
    term_ids: np.ndarray  # int32
    weights: np.ndarray   # float32

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)

    def check(self, n_rows: int) -> bool:
        ok = (self.lengths.ndim == 1 and len(self.lengths) == n_rows and self.term_ids.ndim == 1
              and self.weights.ndim == 1 and len(self.term_ids) == len(self.weights)
              and int(self.lengths.sum()) == len(self.term_ids) and (len(self.lengths) == 0 or self.lengths.min() >= 0))
        if ok and len(self.term_ids):
            ok = int(self.term_ids.min()) >= 0
        return bool(ok)

    def take(self, rows: np.ndarray) -> "SparseRows":
        """The rows ``rows`` (indices into these rows), in that order (gathered a block of rows at a
        time: no index array of every entry)."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths, offsets = self.lengths[rows], self.offsets
        term_ids = np.empty(int(lengths.sum()), dtype=np.int32)
        weights = np.empty(len(term_ids), dtype=np.float32)
        done = 0
        for b in range(0, len(rows), _TAKE_BLOCK):
            block = lengths[b:b + _TAKE_BLOCK]
            n = int(block.sum())
            before = np.cumsum(block) - block  # the block's entries before each of its rows
            entries = np.repeat(offsets[rows[b:b + _TAKE_BLOCK]] - before, block) + np.arange(n, dtype=np.int64)
            term_ids[done:done + n] = self.term_ids[entries]
            weights[done:done + n] = self.weights[entries]
            done += n
        return SparseRows(lengths, term_ids, weights)

    @classmethod
    def concat(cls, parts: list["SparseRows"]) -> "SparseRows":
        if not parts:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32))
        return cls(np.concatenate([p.lengths for p in parts]), np.concatenate([p.term_ids for p in parts]),
                   np.concatenate([p.weights for p in parts]))


def _save(path: Path, rows: SparseRows) -> None:
    with atomic_open(path, "wb") as handle:
        np.savez(handle, lengths=rows.lengths.astype(np.int64), term_ids=rows.term_ids.astype(np.int32),
                 weights=rows.weights.astype(np.float32))


def _load(path: Path) -> SparseRows | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            rows = SparseRows(z["lengths"], z["term_ids"], z["weights"])
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, NotImplementedError, RuntimeError):
        return None  # (NotImplementedError, RuntimeError: a damaged member header's compression method, encryption bit)
    if rows.lengths.dtype != np.int64 or rows.term_ids.dtype != np.int32 or rows.weights.dtype != np.float32:
        return None
    return rows


class SparseWeightCache:
    """Chunked, resumable storage of one (n_rows, dim) sparse matrix. ``order`` is the encoding
    order (e.g. longest text first; None: the rows' own): chunk i holds the rows
    ``order[i * chunk_size:(i + 1) * chunk_size]``, encoded by ``encode_rows(i * chunk_size, ...)``
    (positions in that order). The complete matrix is stored in row order."""

    def __init__(self, folder: Path, n_rows: int, chunk_size: int, fields: dict, order: np.ndarray | None = None):
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if order is not None and len(order) != n_rows:
            raise ValueError("order must have one entry per row")
        self.folder, self.n_rows, self.chunk_size, self.fields = Path(folder), n_rows, chunk_size, fields
        self.order = order
        self.n_chunks = -(-n_rows // chunk_size)

    @property
    def final_path(self) -> Path:
        return self.folder / "weights.npz"

    @property
    def record_path(self) -> Path:
        return self.folder / "complete.json"

    def part_path(self, i: int) -> Path:
        return self.folder / f"part-{self.chunk_size}-{i:06d}.npz"

    def _json(self, path: Path) -> dict:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def load_complete(self) -> SparseRows | None:
        """The rows when the entry is complete and intact; None when there is no complete
        entry; raises :class:`CacheCorrupt` when there is one that does not check out. Parts still
        lying beside an intact complete entry (its builder was killed between complete.json and
        their removal, or a slower concurrent builder wrote one since) are removed: nothing reads
        them now (where they can be: on a read-only cache the entry is still served)."""
        record = self._json(self.record_path)
        if not record:
            return None
        if record.get("rows") != self.n_rows or not self.final_path.is_file():
            raise CacheCorrupt("complete.json does not describe this corpus's rows, or weights.npz is missing")
        if self.final_path.stat().st_size != record.get("bytes") or sha256(self.final_path) != record.get("sha256"):
            raise CacheCorrupt("weights.npz does not match its recorded size and sha256")
        rows = _load(self.final_path)
        if rows is None or not rows.check(self.n_rows) or len(rows.term_ids) != record.get("entries"):
            raise CacheCorrupt("weights.npz does not hold consistent rows")
        for part in self.folder.glob("part-*.npz"):
            with contextlib.suppress(OSError):  # gone already, or a read-only cache: it still serves the hit
                part.unlink()
        return rows

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.folder)

    def versions(self) -> dict[str, list[str]] | None:
        """The versions of the libraries that encoded this entry's rows (versions.json), None where none is
        recorded (an entry written before they were)."""
        return recorded_versions(self.folder)

    def add_versions(self, found: dict[str, str]) -> None:
        """Record (before the part they encode is written) that libraries of the versions ``found`` encode rows
        of this entry; parts already there with no record count as ``unknown``."""
        record_versions(self.folder, found, lambda: any(self.folder.glob("part-*.npz")) or self.final_path.is_file())

    def saved_part(self, i: int) -> SparseRows | None:
        """Chunk ``i``'s part when its file is there whole and holds one row per document of the chunk,
        else None."""
        part = _load(self.part_path(i))
        n = min(self.n_rows, (i + 1) * self.chunk_size) - i * self.chunk_size
        return part if part is not None and part.check(n) else None

    def build(self, encode_rows: Callable[[int, int], SparseRows],
              on_progress: Callable[[int], None] | None = None) -> tuple[SparseRows, int]:
        """Fill the entry: load finished parts, encode the others with ``encode_rows(start, stop)``
        (positions in the encoding order), then write the complete matrix (row order) and its record.
        Returns (rows, rows taken from earlier parts)."""
        meta = self._json(self.folder / "meta.json")
        if meta.get("rows") != self.n_rows or meta.get("chunk_size") != self.chunk_size:
            if meta:  # another chunk size's entry: restart it (with no meta.json yet, another process
                self.discard()  # starting the same entry at the same time may be writing its own now)
            meta = {**self.fields, "format": FORMAT_VERSION, "rows": self.n_rows, "chunk_size": self.chunk_size}
            write_json(self.folder / "meta.json", meta)
        remove_abandoned(self.folder)  # a killed process's temporary weights.npz or part
        parts, reused = [], 0
        for i in range(self.n_chunks):
            start, stop = i * self.chunk_size, min(self.n_rows, (i + 1) * self.chunk_size)
            part = self.saved_part(i)
            if part is not None:
                reused += stop - start
            else:
                part = encode_rows(start, stop)
                if not part.check(stop - start):
                    raise ValueError(f"encoder returned inconsistent rows for documents {start}..{stop}")
                _save(self.part_path(i), part)
                if on_progress is not None:
                    on_progress(stop - start)
            parts.append(part)
        rows = SparseRows.concat(parts)
        if self.order is not None:
            rows = rows.take(inverse_permutation(self.order))
        _save(self.final_path, rows)
        write_json(self.record_path, {"rows": self.n_rows, "entries": int(len(rows.term_ids)),
                                      "bytes": self.final_path.stat().st_size, "sha256": sha256(self.final_path)})
        for i in range(self.n_chunks):
            with contextlib.suppress(FileNotFoundError):
                self.part_path(i).unlink()
        return rows, reused
