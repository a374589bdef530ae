"""File checksums, streamed in blocks (the corpus of a large dataset never sits in memory)."""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from pathlib import Path
from typing import IO


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes with ``algorithm`` (any name hashlib knows: sha256, md5, ...)."""
    with open(path, "rb") as handle:
        return stream_digest(handle, algorithm)


def stream_digest(handle: IO[bytes], algorithm: str = "sha256") -> str:
    """Hex digest of what ``handle`` reads, in 1 MiB blocks."""
    digest = hashlib.new(algorithm)
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def sha256(path: str | os.PathLike) -> str:
    return file_digest(path, "sha256")


def content_sha256(path: str | os.PathLike) -> str:
    """sha256 of what a file holds: a ``.gz`` file's decompressed bytes (every member), any other file's
    bytes (then it is :func:`sha256`). The same text gzipped at another level, by another tool or with
    another header mtime has one content checksum; its file checksums differ. Read as the corpus parser
    reads it (:func:`harness.datasets.jsonl.open_binary`: isal's igzip, ~1.3 s per 448 MB of gzip here), and a
    damaged ``.gz`` is the parser's line, ``<file>: cannot read file: ...``."""
    if not str(path).endswith(".gz"):
        return sha256(path)
    # (lazy: the datasets package imports this module)
    from harness.datasets.jsonl import open_binary, read_errors, unreadable

    try:
        with open_binary(Path(path)) as handle:
            return stream_digest(handle)
    except read_errors() as exc:  # (a bare EOFError reached the CLI as "Aborted.", from the corpus cache's hashing
        # thread or a bench plan)
        raise unreadable(Path(path), exc) from None


def crc32(path: str | os.PathLike) -> str:
    """CRC-32 (zlib's polynomial, as Lucene's index file footers) of a file's bytes, as 8 hex digits:
    a check against accidental damage (a flipped bit, a torn write), not against tampering; isal's
    (~12 GB/s here, sha256 ~1.1 GB/s) when installed, else zlib's, which gives the same value."""
    try:
        from isal.isal_zlib import crc32 as update
    except ImportError:  # pragma: no cover - isal is a dependency
        from zlib import crc32 as update
    value = 0
    with open(path, "rb") as handle:
        try:  # read through a map: no copy into a buffer per block (both CRCs release the GIL)
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file (nothing to map), or one that cannot be mapped
            for block in iter(lambda: handle.read(1 << 22), b""):
                value = update(block, value)
        else:
            with mapped, memoryview(mapped) as view:
                for start in range(0, len(view), 1 << 24):
                    value = update(view[start:start + (1 << 24)], value)
    return f"{value & 0xFFFFFFFF:08x}"


def crc_record(path: str | os.PathLike) -> dict:
    """``{"bytes": size, "crc32": ...}`` of a file: recorded before it is renamed into place, and
    checked by :func:`matches_crc_record` when it is read (a damaged cache file is rebuilt)."""
    return {"bytes": os.stat(path).st_size, "crc32": crc32(path)}


def matches_crc_record(path: str | os.PathLike, record) -> bool:
    """Whether the file at ``path`` has the size and CRC-32 of ``record`` (:func:`crc_record`);
    False for a record that is no dict, or a file that cannot be read."""
    try:
        return (isinstance(record, dict) and os.stat(path).st_size == record.get("bytes")
                and crc32(path) == record.get("crc32"))
    except OSError:
        return False


def matches_record_file(path: str | os.PathLike, record_path: str | os.PathLike, missing: bool = False) -> bool:
    """:func:`matches_crc_record` of the JSON record at ``record_path`` (a cache file's sidecar, written before
    the file is renamed into place); ``missing``: the answer where there is no record file (one that cannot
    be read or parsed: False)."""
    try:
        record = json.loads(Path(record_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return missing
    except (OSError, ValueError):
        return False
    return matches_crc_record(path, record)


def file_signature(path: str | os.PathLike) -> tuple:
    """What changes when a file is rewritten, in place or replaced by a rename: device, inode, size, mtime and
    ctime (ns). Size and mtime alone do not: a rewrite of the same size given its old mtime back (``touch -r``,
    ``rsync -a``) kept them; ctime cannot be set back."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class HashedFile:
    """A file a component reads (a run file, an impacts file) and names in its ``params()`` by sha256: of the file
    as it is now until it has been read, then of the content that was read. (A bench takes every cell's
    parameters when it plans, then runs the cells: a file rewritten meanwhile was read new and recorded old, and
    the cell reused afterwards for the old file's numbers.) A file that changes while it is read, or hashed, is
    refused (HarnessError) with ``what`` naming it."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = Path(path), what
        self._sha256: str | None = None
        self._hashed: tuple | None = None  # the file's signature when _sha256 was computed
        self.read_as: tuple | None = None  # the signature of what read() read

    def sha256(self) -> str:
        if self._sha256 is None or (self.read_as is None and self._hashed != file_signature(self.path)):
            self._sha256, self._hashed = self._unchanged(sha256)
        return self._sha256

    def read(self, reader):
        """``reader(path)``, the file unchanged while it was read; :meth:`sha256` is then of what it read."""
        out, self.read_as = self._unchanged(reader)
        if self._sha256 is None or self._hashed != self.read_as:  # (hashed before a rewrite: hash what was read)
            self._sha256, self._hashed = self._unchanged(sha256, since=self.read_as)
        return out

    def _unchanged(self, read, since: tuple | None = None):
        """(``read(path)``, the file's signature), refused when the file changed while it was read (or since the
        signature ``since``): what was read must be what is hashed."""
        from harness.errors import HarnessError

        before = file_signature(self.path)
        out = read(self.path)
        if file_signature(self.path) != before or since not in (None, before):
            raise HarnessError(f"{self.path}: {self.what} changed while it was read; run again once it is written")
        return out, before
