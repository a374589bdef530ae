"""The parsed-corpus cache: one Arrow IPC (Feather v2) file per corpus source, memory-mapped on reuse.

    <cache>/corpora/<sha256 of the source's content>-v<FORMAT>.arrow

* Key: the sha256 of the source's content (:func:`content_checksum`: a ``corpus.jsonl.gz``'s
  decompressed bytes, a ``corpus.jsonl``'s bytes), the checksum the dataset records in
  ``Dataset.content``, plus :data:`FORMAT` (bumped whenever the parsed form changes). A changed source
  has another checksum, hence another file; identical contents share one, however they are encoded (the
  same text plain, gzipped at any level or with another gzip header: one file, one ``Corpus.fingerprint``,
  hence one BM25 index and one set of embeddings). A plain file's content checksum is its file checksum,
  so its entries written before the key was the content (keyed on the file) are still found; a ``.gz``'s
  old entries (keyed on the compressed bytes) are never looked up again (no name collides: a
  ``corpus.jsonl`` of gzip bytes is refused), hence no :data:`FORMAT` bump. The metadata's
  ``harness.source_sha256`` holds the same key.
* Hashing a large corpus costs seconds (448 MB: ~1-3 s here; a ``.gz`` hashed on its own is also decompressed
  for its content checksum: ~1.3 s per 448 MB of gzip with isal), so both checksums (the file's, recorded in
  ``Dataset.files`` as provenance of exactly which file was read, and the content's) are remembered per
  path in ``<cache>/corpora/stat/<sha256 of the path>.json`` together with the file's device,
  inode, size, mtime and ctime (nanoseconds): while all five are unchanged the file has not been
  written (any write moves mtime and ctime; ctime cannot be set back by ``touch`` or ``cp -p``), and
  the remembered checksum is used; otherwise the file is hashed again. The trade-off: a file whose
  bytes were changed in place without changing any of the five (a raw device write, a clock set
  back and a filesystem without ctime) would be served the old cache; ``HARNESS_CORPUS_VERIFY=full``
  hashes the source on every load (and re-remembers it).
* A path that nothing is remembered for (the first load with this cache) cannot have a cache file
  to find except under another path's identical bytes, so it is hashed on a thread while it is
  parsed (the cache is looked up once both are done); a ``.gz``'s content checksum is taken from the
  bytes the parse decompresses (:class:`harness.datasets.jsonl.ContentDigest`: decompressed once, not
  twice), and hashed from the file afterwards only when no parse read it to its end (a corpus the fast
  parse refuses: the line scan reads it). Both are remembered only when the stat taken before the parse
  still holds after it. A path remembered with another stat is hashed first, so a touched but unchanged
  file is mapped, not parsed.
* Written atomically (temporary file + rename, :mod:`harness.atomic`): an interrupted write leaves
  no ``.arrow`` file, only a temporary one, named with its process id and removed by the next write
  into the folder, or the next load that finds its file cached, once that process is gone
  (``harness.atomic.remove_abandoned``). Uncompressed, so the next run memory-maps it
  (a read-only ``mmap.mmap`` read by ``pyarrow.ipc`` without copying): the text is paged in from the
  file as read, and a reader that is done with a part gives its pages back (``Corpus.release``).
* Streamed (:func:`stream_into_cache`, the loader's first choice): the source is parsed batch by
  batch into a temporary file, which is mapped, then fsynced and renamed into place on a
  (non-daemon) thread while the caller goes on (:func:`seal_in_background`; the source's build lock
  is held until the rename): the parsed corpus is
  never whole in RAM (8.8M passages: a cold load peaks at 1.25 GB instead of 5.3 GB). Its schema
  metadata holds the format only (the checksum, hashed meanwhile, is not known when the schema is
  written): the file's name is its key. When the stream refuses the source, or the file cannot be
  written, the corpus is parsed whole and cached as below.
* Written in the background (a corpus parsed whole): a cold load returns the parsed corpus at once and a (non-daemon)
  thread writes the file while the caller indexes (writing 360 MB costs ~0.1-0.7 s of CPU here,
  the fsync more in wall time); once the file is renamed into place the corpus is switched to its
  map (``Corpus.use_mapped``) and the parsed copy is freed, so a long index build does not hold
  both. The process does not exit before the file is complete (the thread is joined at interpreter
  exit; :func:`wait` joins it earlier); a later load of the same source in the same process waits
  for it. A failed write (read-only or full disk) is logged and leaves the corpus in memory.
* Each file's size and CRC-32 (:func:`harness.checksums.crc_record`) are written to ``<file>.crc.json``
  (:func:`crc_path`) before the file is renamed into place (streamed, whole, keyed alike; the CRC reads the
  file once more, ~0.03 s per 380 MB, on the writing thread). ``$HARNESS_CORPUS_VERIFY=full`` checks it
  before a file is mapped (the whole file read: ~0.03 s per 380 MB in the page cache), and parses the source
  again where it does not match or there is none (a file written before records were kept): a text changed
  on disk since (same size, sound structure) is never served. A default load does not read it (a warm BM25
  run reads no text; the checks below are structural), as the BM25 index cache's quick verification reads
  the ends of its files only.
* A cache file that cannot be opened, has the wrong schema or format, names another source or row count
  in its metadata (when it records them), fails Arrow's structural validation, or has a string offset out of
  order (:func:`_offsets_sound`: a damaged one would crash a read) is rebuilt from the source.
* Only corpora of at least :data:`MIN_BYTES` are cached (smaller ones parse in well under a second);
  ``load_corpus(path, cache=True/False)`` overrides that.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Callable

from harness.atomic import (atomic_path, build_lock, create_new, remove_abandoned, seal, temporary_path,
                            waited_holder, write_json)
from harness.background import PendingWrites
from harness.cache import cache_dir
from harness.checksums import content_sha256, crc_record, file_signature, matches_record_file, sha256
from harness.datasets.jsonl import ContentDigest

FORMAT = 3  # 2: a streamed file's metadata has no source checksum (its name is the key; see open_cached);
# 3: the fast parse checks each line (one object per line, no lone CR): a v2 file may hold the rows of a
# source that is refused now (an object broken over a lone CR loaded as a document), so it is not read
MIN_BYTES = 32 << 20
KIND = "corpora"
VERIFY_ENV = "HARNESS_CORPUS_VERIFY"  # "full": hash the source on every load (the memo is not trusted), and
# check a cache file's CRC-32 record before it is mapped (crc_path)


def _verify_full() -> bool:
    return os.environ.get(VERIFY_ENV, "").strip().lower() == "full"

log = logging.getLogger(__name__)
_pending = PendingWrites()  # cache file -> the thread writing it


def _stat_key(path: Path) -> list[int]:
    return list(file_signature(path))  # (device, inode, size, mtime, ctime: as the memo files hold it)


def _memo_path(path: Path) -> Path:
    return cache_dir(KIND) / "stat" / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.json"


FILE, CONTENT = "sha256", "content_sha256"  # the memo's two checksums (see content_checksum)


def source_checksum(path: Path) -> str:
    """sha256 of ``path``'s bytes (the provenance of exactly which file was read: ``Dataset.files``); for a
    file of :data:`MIN_BYTES` or more, remembered while its stat is unchanged."""
    return _checksum(Path(path), FILE)


def content_checksum(path: Path) -> str:
    """sha256 of what ``path`` holds (:func:`harness.checksums.content_sha256`: a ``.gz`` file's
    decompressed bytes; any other file's bytes, i.e. :func:`source_checksum`): the corpus's identity, which
    keys this cache and ``Corpus.fingerprint``, so one text gzipped or not, at any level, by any tool, is one
    corpus. Remembered beside the file's checksum, while the stat is unchanged, for a file of
    :data:`MIN_BYTES` or more (a warm load decompresses nothing)."""
    return _checksum(Path(path), CONTENT)


def _checksum(path: Path, field: str) -> str:
    if path.stat().st_size < MIN_BYTES:  # (remembered in this process only: _small_checksum)
        decompressed = field == CONTENT and path.suffix == ".gz"
        if _verify_full():
            return content_sha256(path) if decompressed else sha256(path)
        return _small_checksum(str(path.resolve()), decompressed, tuple(_stat_key(path)))
    digest, _ = _remembered(path, field)
    return digest if digest is not None else _hash_and_remember(path)[field]


@lru_cache(maxsize=64)
def _small_checksum(path: str, decompressed: bool, stat: tuple) -> str:
    """The checksum of a file under :data:`MIN_BYTES` (of its bytes; ``decompressed``: of a ``.gz``'s content),
    taken once per process while its ``stat`` is unchanged: a dataset's load asks for the corpus's content
    checksum twice (its fingerprint, ``Dataset.content``), and a plain file's content checksum is its file
    checksum (SciFact's 2.7 MB corpus.jsonl.gz was gunzipped twice per load, ~18 ms each)."""
    return content_sha256(path) if decompressed else sha256(path)


def _remembered(path: Path, field: str = CONTENT) -> tuple[str | None, bool]:
    """(the remembered checksum ``field`` of ``path`` when its stat is unchanged and ``$HARNESS_CORPUS_VERIFY``
    is not ``full``, else None; whether anything is remembered for this path at all). A memo written before
    content checksums were remembered has none: a plain file's is its file checksum, a ``.gz`` is hashed again."""
    memo = _memo_path(path)
    try:
        entry = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, False
    try:
        if (not _verify_full() and entry.get("stat") == _stat_key(path)
                and entry.get("path") == str(path.resolve())):
            if field == CONTENT and CONTENT not in entry and path.suffix != ".gz":
                field = FILE
            if isinstance(entry.get(field), str):
                return entry[field], True
    except (AttributeError, KeyError):
        pass
    return None, True


def _hash_and_remember(path: Path) -> dict[str, str]:
    """{FILE: sha256 of the file, CONTENT: of its content} (one read for a plain file, two for a ``.gz``)."""
    before = _stat_key(path)
    return _remember(path, before, sha256(path))


def _remember(path: Path, before: list[int], digest: str, content: str | None = None) -> dict[str, str]:
    """{FILE: ``digest``, the file's sha256; CONTENT: ``content``, else (None) ``digest`` for a plain file and
    :func:`content_sha256` for a ``.gz``}, remembered when the stat of ``path`` is still ``before`` (taken
    before the file was first read for them)."""
    if content is None:
        content = content_sha256(path) if path.suffix == ".gz" else digest
    digests = {FILE: digest, CONTENT: content}
    if _stat_key(path) == before:  # not written while we hashed it
        try:
            write_json(_memo_path(path), {"path": str(path.resolve()), "stat": before, **digests})
        except OSError:
            pass  # a read-only cache: hash again next time
    return digests


def fingerprint(digest: str) -> str:
    """The corpus fingerprint of a source whose sha256 is ``digest`` (see ``Corpus.fingerprint``)."""
    return hashlib.sha256(f"corpus-jsonl v{FORMAT} {digest}".encode()).hexdigest()


def cache_path(digest: str) -> Path:
    return cache_dir(KIND) / f"{digest}-v{FORMAT}.arrow"


def crc_path(target: Path) -> Path:
    """The record of cache file ``target``'s size and CRC-32 (:func:`harness.checksums.crc_record`),
    written before the file is renamed into place; ``$HARNESS_CORPUS_VERIFY=full`` checks it (the whole
    file read) before the file is mapped."""
    return target.with_name(target.name + ".crc.json")


def _record_then_rename(tmp: Path, target: Path) -> None:
    """Write the sealed temporary file ``tmp``'s size and CRC-32 to :func:`crc_path` (atomically), then
    rename ``tmp`` to ``target``: a file in place always has its record (a kill between the two leaves a
    record and no file, which the next write replaces)."""
    write_json(crc_path(target), crc_record(tmp))
    os.replace(tmp, target)


def _metadata(digest: str, rows: int) -> dict[bytes, bytes]:
    return {b"harness.source_sha256": digest.encode(), b"harness.rows": str(rows).encode(),
            b"harness.format": str(FORMAT).encode(), VERSIONS_KEY: _versions_record()}


# What parsed a file's rows, recorded in it when it is written, not keyed (an upgrade of pyarrow parses nothing
# again; FORMAT guards what a file holds): a load that maps a file another pyarrow wrote says so
# (harness.datasets.load_dataset; docs/cache.md "Library versions: recorded, not keyed").
PARSED_WITH = ("pyarrow",)
VERSIONS_KEY = b"harness.versions"


def _versions_record(names: tuple[str, ...] = PARSED_WITH) -> bytes:
    from harness.versions import computed_with

    return json.dumps(computed_with(names)).encode()


def recorded_versions(table) -> dict[str, str] | None:
    """The library versions a file of this cache records (``table``'s metadata: name -> version, the pyarrow
    that parsed it); None for a table not read from one, or from a file written before they were recorded."""
    from harness.versions import versions_value

    raw = (table.schema.metadata or {}).get(VERSIONS_KEY)
    try:
        return versions_value(json.loads(raw)) if raw is not None else None
    except ValueError:  # (not JSON: as none recorded)
        return None


def open_cached(target: Path, digest: str, columns: tuple[str, ...], recorded: bool = True):
    """(the memory-mapped table in ``target``, its ``mmap.mmap``), or None when it is absent or not a
    sound cache of ``digest``. ``recorded``: ``target`` is a file in place, which under
    ``$HARNESS_CORPUS_VERIFY=full`` must match its CRC-32 record (:func:`crc_path`; a file with none,
    written before they were kept, is parsed again), not a temporary file this process just wrote."""
    import pyarrow as pa

    if not target.is_file():
        return None
    if recorded and _verify_full() and not _matches_record(target):
        return None
    try:
        with open(target, "rb") as handle:
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapping))).read_all()
        meta = table.schema.metadata or {}
        if (tuple(table.column_names) != columns
                or any(not pa.types.is_string(t) and not pa.types.is_large_string(t) for t in table.schema.types)
                or meta.get(b"harness.format") != str(FORMAT).encode()
                or meta.get(b"harness.source_sha256", digest.encode()) != digest.encode()
                or meta.get(b"harness.rows", str(table.num_rows).encode()) != str(table.num_rows).encode()):
            return None
        table.validate()
        if not _offsets_sound(table):
            return None
        if hasattr(mapping, "madvise"):  # the offsets just read: not resident until a reader needs them
            mapping.madvise(mmap.MADV_DONTNEED)
        return table, mapping
    except (OSError, pa.ArrowException, ValueError):
        return None


def _matches_record(target: Path) -> bool:
    """Whether cache file ``target`` has the size and CRC-32 its record holds (False without a record)."""
    return matches_record_file(target, crc_path(target))


def _offsets_sound(table) -> bool:
    """Whether each string chunk's offsets start at 0 or more, never decrease and end within its data.

    Arrow's cheap ``validate()`` reads only a chunk's first and last offset; one damaged offset in
    between (a flipped bit) sends a read of that string outside the file's map: the process dies
    (SIGSEGV) instead of rebuilding the file. This reads the offsets only (4 bytes per string, not
    the text), whose pages :func:`open_cached` then drops from the process again."""
    import numpy as np
    import pyarrow as pa

    for column in table.columns:
        for chunk in column.chunks:
            if not len(chunk):
                continue
            width = np.dtype(np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
            _, offsets, data = chunk.buffers()
            values = np.frombuffer(offsets, dtype=width, count=len(chunk) + 1, offset=chunk.offset * width.itemsize)
            if values[0] < 0 or values[-1] > (data.size if data is not None else 0) \
                    or (values[1:] < values[:-1]).any():
                return False
    return True


def write_cached(target: Path, table, digest: str) -> None:
    """Write ``table`` to ``target`` as an uncompressed Arrow IPC file, atomically."""
    import pyarrow as pa

    table = table.replace_schema_metadata(_metadata(digest, table.num_rows))
    remove_abandoned(target.parent)
    with atomic_path(target) as tmp:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        write_json(crc_path(target), crc_record(tmp))  # the record first (see _record_then_rename)


def load_or_build(path: Path, columns: tuple[str, ...], build: Callable[[], object],
                  make: Callable[[object, mmap.mmap | None], object], stream: Callable | None = None):
    """``make(table, mapping)`` of the cached table of ``path`` (memory-mapped), else of ``build()``'s
    table (in RAM, ``mapping`` None), which a background thread then caches (see the module
    docstring; the made object's ``use_mapped(table, mapping)`` is called once the file is written).

    ``stream``: None, or ``stream(write) -> bool``, which parses the source batch by batch, handing
    each ``pyarrow.RecordBatch`` of ``columns`` to ``write`` as it comes, and says whether the whole
    source was taken (False: refused, e.g. a line the fast parse does not take). It is tried first:
    the batches go straight into the cache file (:func:`stream_into_cache`), which is then mapped,
    so the parsed corpus is never held whole in RAM (nor copied into the file afterwards); when it
    refuses, ``build()`` runs as above.

    A load that does not find the file cached under a remembered checksum parses under the source's
    build lock (``<cache>/corpora/stat/<sha256 of the path>.lock``: :func:`harness.atomic.build_lock`): a
    second process loading the same source meanwhile waits (a warning says so), then maps the file the
    first wrote instead of parsing the source a second time beside it.

    Returns (the made object, sha256 of the source's content: :func:`content_checksum`)."""
    path = Path(path)
    digest, _ = _remembered(path) if path.stat().st_size >= MIN_BYTES else (None, True)
    if digest is not None:
        target = cache_path(digest)
        wait(target)
        cached = open_cached(target, digest, columns)
        if cached is not None:  # a hit: no lock
            remove_abandoned(target.parent)
            return make(*cached), digest

    def waiting() -> None:
        log.warning("%s is parsing %s into the corpus cache; waiting for it", waited_holder(), path)
    release = build_lock(_memo_path(path).with_suffix(".lock"), on_wait=waiting)
    try:
        made, digest, handed = _load_or_build(path, columns, build, make, stream, release)
    except BaseException:
        release()
        raise
    if not handed:  # (else the streamed file's background seal releases it)
        release()
    return made, digest


def _load_or_build(path: Path, columns: tuple[str, ...], build: Callable[[], object],
                   make: Callable[[object, mmap.mmap | None], object], stream: Callable | None,
                   release: Callable[[], None]):
    """:func:`load_or_build` under the source's build lock: (the made object, the digest, whether the
    lock's ``release`` was handed to :func:`seal_in_background`, which calls it once the file is in place)."""
    digest, seen = _remembered(path) if path.stat().st_size >= MIN_BYTES else (None, True)
    table = streamed = None
    if digest is None and not seen:  # a path never loaded with this cache: no file to expect, so hash it
        # while parsing it: the file's bytes on a thread (hashlib releases the GIL), a .gz's content from the
        # bytes the parse decompresses (one decompression; hashed again only when no parse read it whole)
        before, gz = _stat_key(path), path.suffix == ".gz"
        with ThreadPoolExecutor(1, thread_name_prefix="sha256") as pool, \
                (ContentDigest(path) if gz else nullcontext()) as parsed:
            hashing = pool.submit(sha256, path)
            try:
                streamed = stream_into_cache(stream, sealed=False) if stream is not None else None
                if streamed is None:
                    table = build()
            finally:
                file_digest = hashing.result()
        digest = _remember(path, before, file_digest, parsed.hexdigest if gz else None)[CONTENT]
    elif digest is None:
        digest = content_checksum(path)
    target = cache_path(digest)
    wait(target)  # this process is writing it: use the finished file
    cached = open_cached(target, digest, columns)
    if cached is not None:  # (also when the same bytes were cached under another path)
        if streamed is not None:
            streamed.unlink(missing_ok=True)
        remove_abandoned(target.parent)  # a killed load's temporary file: no write follows a hit to remove it
        return make(*cached), digest, False
    if table is None and streamed is None and stream is not None:
        streamed = stream_into_cache(stream, sealed=False)
    if streamed is not None:  # mapped now, fsynced and renamed into place meanwhile (the map stays valid)
        cached = open_cached(streamed, digest, columns, recorded=False)
        if cached is None:
            streamed.unlink(missing_ok=True)
        else:
            try:
                made = make(*cached)
            except BaseException:
                streamed.unlink(missing_ok=True)
                raise
            seal_in_background(streamed, target, release)
            return made, digest, True
    if table is None:
        table = build()
    made = make(table, None)
    write_in_background(target, table, digest, columns, made)
    return made, digest, False


def keyed_memo(key: str) -> Path:
    """Where the content checksum of a corpus cached under ``key`` (:func:`load_keyed`) is remembered."""
    return cache_dir(KIND) / "keyed" / f"{key}.json"


def keyed_path(digest: str) -> Path:
    return cache_dir(KIND) / f"keyed-{digest}-v{FORMAT}.arrow"


def _keyed_hit(key: str, columns: tuple[str, ...]):
    """(table, map, content sha256) of the corpus cached under ``key``, or None."""
    if _verify_full():
        return None
    try:
        entry = json.loads(keyed_memo(key).read_text(encoding="utf-8"))
        digest = entry["sha256"]
        if entry.get("key") != key or not isinstance(digest, str):
            return None
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None
    cached = open_cached(keyed_path(digest), digest, columns)
    if cached is None or cached[0].num_rows != entry.get("rows"):
        return None
    return (*cached, digest)


def load_keyed(key: str, columns: tuple[str, ...], stream: Callable, check: Callable | None = None,
               waiting: str = "caching this corpus; waiting for it",
               parsed_with: tuple[str, ...] = PARSED_WITH):
    """A corpus cached under a key that identifies its source without reading it (an ir_datasets
    collection: its id, its documents file's path and stat, the conversion's version:
    :mod:`harness.datasets.irds`), where there is no one file whose bytes make the key.

    ``stream(write) -> str | None`` parses the source batch by batch into ``write`` (as
    :func:`load_or_build`'s ``stream``) and returns the sha256 of the content it wrote (None: nothing
    to keep). The batches go into a temporary file; ``check(table)`` (the mapped table; it raises to
    refuse the corpus, e.g. a duplicate id) runs before the file is renamed to
    ``<cache>/corpora/keyed-<content sha256>-v<FORMAT>.arrow`` and the key's memo
    (``<cache>/corpora/keyed/<key>.json``: the content sha256 and the row count) is written, both
    atomically. The next load with that key maps the file: the source is not read again. A second
    process loading the same key meanwhile waits under the key's build lock (``waiting`` is logged)
    and then maps it. ``$HARNESS_CORPUS_VERIFY=full`` reads the source again on every load.
    ``parsed_with``: the libraries whose versions the file records (:func:`stream_into_cache`).

    Returns (table, map, content sha256), or None when the file could not be written (a read-only
    or full cache) or ``stream`` kept nothing: the caller then reads the source into memory."""
    hit = _keyed_hit(key, columns)
    if hit is not None:
        return hit
    memo = keyed_memo(key)
    release = build_lock(memo.with_suffix(".lock"), on_wait=lambda: log.warning("%s is %s", waited_holder(), waiting))
    try:
        hit = _keyed_hit(key, columns)
        if hit is not None:
            return hit
        box: dict = {}

        def take(write) -> bool:
            box["digest"] = stream(write)
            return box["digest"] is not None
        tmp = stream_into_cache(take, parsed_with)
        if tmp is None:
            return None
        digest = box["digest"]
        try:
            cached = open_cached(tmp, digest, columns, recorded=False)
            if cached is None:
                return None
            if check is not None:
                check(cached[0])
            target = keyed_path(digest)
            try:
                _record_then_rename(tmp, target)
                write_json(memo, {"key": key, "sha256": digest, "rows": cached[0].num_rows})
            except OSError as exc:
                log.warning("could not write the corpus cache %s: %s", target, exc)
            return (*cached, digest)  # (the map stays valid when its file is renamed)
        finally:
            tmp.unlink(missing_ok=True)
    finally:
        release()


def stream_into_cache(stream: Callable, parsed_with: tuple[str, ...] = PARSED_WITH, sealed: bool = True
                      ) -> Path | None:
    """Run ``stream(write)`` (see :func:`load_or_build`) into a temporary Arrow IPC file in the cache
    folder, written and fsynced: its path, to be renamed into place; None when ``stream`` refused
    the source or gave no rows, or the file could not be written (a read-only or full disk: logged);
    then nothing is left behind. ``parsed_with``: the libraries whose versions the file records as
    what parsed its rows (:data:`PARSED_WITH`; an ir_datasets collection's adds ir_datasets).
    ``sealed=False``: closed but not fsynced (:func:`seal_in_background` does that)."""
    import pyarrow as pa

    folder = cache_dir(KIND)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_abandoned(folder)
    except OSError as exc:
        log.warning("could not write the corpus cache under %s: %s", folder, exc)
        return None
    tmp = temporary_path(folder / "stream")  # created in the try below, whose finally removes it
    state: dict = {}

    def write(batch) -> None:
        if "writer" not in state:
            schema = batch.schema.with_metadata({b"harness.format": str(FORMAT).encode(),
                                                 VERSIONS_KEY: _versions_record(parsed_with)})
            # appended to (the file is new and empty), not opened with O_TRUNC: ext4 flushes a file truncated
            # to size 0 when it is closed (its auto_da_alloc), on the closing thread: ~0.1 s of a 1M-document
            # cold load's main thread waiting for writeback that the fsync (in the background) does anyway
            state["sink"] = pa.OSFile(str(tmp), "ab")
            state["writer"] = pa.ipc.new_file(state["sink"], schema)
        state["writer"].write_batch(batch)

    def close() -> None:
        for key in ("writer", "sink"):
            if key in state:
                state.pop(key).close()

    done = False
    try:
        os.close(create_new(tmp))
        if stream(write) and "writer" in state:
            close()
            if sealed:
                seal(tmp)
            done = True
            return tmp
        return None
    except (OSError, pa.ArrowException) as exc:  # writing the file failed (the source's faults are the
        log.warning("could not write the corpus cache file %s: %s", tmp, exc)  # stream's to report)
        return None
    finally:
        if not done:
            try:
                close()
            except (OSError, pa.ArrowException):
                pass
            try:
                tmp.unlink(missing_ok=True)
            except OSError:  # (a read-only file system: EROFS even for a file it never created)
                pass


def seal_in_background(tmp: Path, target: Path, release: Callable[[], None]) -> threading.Thread:
    """Seal (fsync) the streamed cache file ``tmp``, which the caller has mapped already, and rename
    it to ``target``, on a non-daemon thread (see the module docstring); then call ``release`` (the
    source's build lock, so that another process loading the same source waits for the file rather
    than parsing beside it). The fsync of a corpus (hundreds of MB written back) thus overlaps what
    the caller does next (at 1M documents ~0.1-0.15 s of a cold load's wall time waiting for the
    disk). A failure (a full disk) is logged and removes ``tmp``: the caller's map stays valid."""
    def task() -> None:
        try:
            seal(tmp)
            _record_then_rename(tmp, target)
        except OSError as exc:
            log.warning("could not write the corpus cache %s: %s", target, exc)
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
        finally:
            release()

    return _pending.start(target, task, name=f"corpus-cache-seal-{target.name[:8]}")


def write_in_background(target: Path, table, digest: str, columns: tuple[str, ...], made) -> threading.Thread:
    """:func:`write_cached` on a non-daemon thread, then ``made.use_mapped(table, mapping)`` with the
    written file's map and the parsed table freed (see the module docstring)."""
    box = [table]  # the writer's only reference: dropped once the map replaces it
    del table

    def write() -> None:
        try:
            write_cached(target, box[0], digest)
            reopened = open_cached(target, digest, columns, recorded=False)  # (just written: not read back twice)
            if reopened is not None:
                made.use_mapped(*reopened)
                box.clear()  # the parsed copy: the memory-mapped file replaces it
                _release_freed_memory()
        except Exception as exc:  # a read-only or full disk must not stop the run: the corpus is in RAM
            log.warning("could not write the corpus cache %s: %s", target, exc)
        finally:
            box.clear()

    return _pending.start(target, write, name=f"corpus-cache-{digest[:8]}")


def wait(target: Path | None = None) -> None:
    """Wait until the background write of cache file ``target`` (every one when None) is finished."""
    _pending.wait(target)


def _release_freed_memory() -> None:
    """Give the memory Arrow's allocator keeps after a free back to the system now: mimalloc may hold
    on to a freed corpus (hundreds of MB) until Arrow next allocates, i.e. through a whole index
    build, which then peaks that much higher (seen: 1.86 GB instead of 1.42 GB at 1M documents, and
    1.8 GB kept through indexing and search at 8.8M passages)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
