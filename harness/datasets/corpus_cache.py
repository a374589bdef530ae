"""The parsed-corpus cache: one Arrow IPC (Feather v2) file per corpus source, memory-mapped on reuse.

    <cache>/corpora/<sha256 of the source file>-v<FORMAT>.arrow

* Key: the sha256 of the source file's bytes (``corpus.jsonl[.gz]``), the same checksum the dataset
  records in ``Dataset.files``, plus :data:`FORMAT` (bumped whenever the parsed form changes). A
  changed source has another checksum, hence another file; identical sources share one.
* Hashing a large corpus costs seconds (448 MB: ~1-3 s here), so the checksum is remembered per
  path in ``<cache>/corpora/stat/<sha256 of the path>.json`` together with the file's device,
  inode, size, mtime and ctime (nanoseconds): while all five are unchanged the file has not been
  written (any write moves mtime and ctime; ctime cannot be set back by ``touch`` or ``cp -p``), and
  the remembered checksum is used; otherwise the file is hashed again.
* Written atomically (temporary file + rename, :mod:`harness.atomic`): an interrupted write leaves
  no ``.arrow`` file, only a stray temporary one. Uncompressed, so the next run memory-maps it
  (a read-only ``mmap.mmap`` read by ``pyarrow.ipc`` without copying): the text is paged in from the
  file as read, and a reader that is done with a part gives its pages back (``Corpus.release``).
* A cache file that cannot be opened, has the wrong schema, names another source or row count in its
  metadata, or fails Arrow's structural validation is rebuilt from the source.
* Only corpora of at least :data:`MIN_BYTES` are cached (smaller ones parse in well under a second);
  ``load_corpus(path, cache=True/False)`` overrides that.
"""

from __future__ import annotations

import hashlib
import json
import mmap
from pathlib import Path
from typing import Callable

from harness.atomic import atomic_path, write_json
from harness.cache import cache_dir
from harness.checksums import sha256

FORMAT = 1
MIN_BYTES = 32 << 20
KIND = "corpora"
_STAT_FIELDS = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")


def _stat_key(path: Path) -> list[int]:
    stat = path.stat()
    return [getattr(stat, name) for name in _STAT_FIELDS]


def _memo_path(path: Path) -> Path:
    return cache_dir(KIND) / "stat" / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.json"


def source_checksum(path: Path) -> str:
    """sha256 of ``path``; for a file of :data:`MIN_BYTES` or more, remembered while its stat is unchanged."""
    path = Path(path)
    if path.stat().st_size < MIN_BYTES:
        return sha256(path)
    memo = _memo_path(path)
    before = _stat_key(path)
    try:
        entry = json.loads(memo.read_text(encoding="utf-8"))
        if entry.get("stat") == before and entry.get("path") == str(path.resolve()):
            return entry["sha256"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    digest = sha256(path)
    if _stat_key(path) == before:  # not written while we hashed it
        try:
            write_json(memo, {"path": str(path.resolve()), "stat": before, "sha256": digest})
        except OSError:
            pass  # a read-only cache: hash again next time
    return digest


def fingerprint(digest: str) -> str:
    """The corpus fingerprint of a source whose sha256 is ``digest`` (see ``Corpus.fingerprint``)."""
    return hashlib.sha256(f"corpus-jsonl v{FORMAT} {digest}".encode()).hexdigest()


def cache_path(digest: str) -> Path:
    return cache_dir(KIND) / f"{digest}-v{FORMAT}.arrow"


def _metadata(digest: str, rows: int) -> dict[bytes, bytes]:
    return {b"harness.source_sha256": digest.encode(), b"harness.rows": str(rows).encode(),
            b"harness.format": str(FORMAT).encode()}


def open_cached(target: Path, digest: str, columns: tuple[str, ...]):
    """(the memory-mapped table in ``target``, its ``mmap.mmap``), or None when it is absent or not a
    sound cache of ``digest``."""
    import pyarrow as pa

    if not target.is_file():
        return None
    try:
        with open(target, "rb") as handle:
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapping))).read_all()
        meta = table.schema.metadata or {}
        if (tuple(table.column_names) != columns
                or any(not pa.types.is_string(t) and not pa.types.is_large_string(t) for t in table.schema.types)
                or meta.get(b"harness.source_sha256") != digest.encode()
                or meta.get(b"harness.rows") != str(table.num_rows).encode()):
            return None
        table.validate()
        return table, mapping
    except (OSError, pa.ArrowException, ValueError):
        return None


def write_cached(target: Path, table, digest: str) -> None:
    """Write ``table`` to ``target`` as an uncompressed Arrow IPC file, atomically."""
    import pyarrow as pa

    table = table.replace_schema_metadata(_metadata(digest, table.num_rows))
    with atomic_path(target) as tmp:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)


def load_or_build(path: Path, columns: tuple[str, ...], build: Callable[[], object]):
    """The cached table of ``path`` (memory-mapped), else ``build()``'s table, cached for next time.

    Returns (table, sha256 of the source, the ``mmap.mmap`` holding the table or None when in RAM)."""
    digest = source_checksum(path)
    target = cache_path(digest)
    cached = open_cached(target, digest, columns)
    if cached is not None:
        return cached[0], digest, cached[1]
    table = build()
    try:
        write_cached(target, table, digest)
    except OSError:
        return table, digest, None  # cannot write the cache (read-only, full disk): use the parsed table
    reopened = open_cached(target, digest, columns)
    if reopened is None:
        return table, digest, None
    del table  # the parsed copy: the memory-mapped file replaces it
    _release_freed_memory()
    return reopened[0], digest, reopened[1]


def _release_freed_memory() -> None:
    """Give the memory Arrow's allocator keeps after a free back to the system now: mimalloc may hold
    on to a freed corpus (hundreds of MB) until Arrow next allocates, i.e. through a whole index
    build, which then peaks that much higher (seen: 1.86 GB instead of 1.42 GB at 1M documents, and
    1.8 GB kept through indexing and search at 8.8M passages)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
