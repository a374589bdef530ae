"""On-disk cache of built BM25 indexes, keyed by corpus identity + analyzer + scoring parameters.

Layout: ``<cache root>/bm25/<key>/`` holding ``terms.txt`` (one term a line), one ``.npy`` file per
index array, and ``manifest.json`` (format version, key, parameters, the versions of the libraries that
built it (``versions``: the harness, numpy, regex and PyStemmer where the analyzer uses them; in no key, see
:func:`recorded_versions`), and per file its size, the CRC-32 of its whole content and the sha256 of its ends:
the first and last :data:`END_BYTES`).
The cache root is ``cache_dir`` when given, else ``$HARNESS_CACHE_DIR``, else
``$XDG_CACHE_HOME/retrieval-harness`` (default ``~/.cache/retrieval-harness``).

Writes are atomic: everything goes into a temporary sibling folder, which is renamed to ``<key>``
only when complete (manifest last), so an interrupted build leaves no half-written entry; every file
is fsynced before the manifest is written, so a power loss cannot leave a manifest vouching for
arrays whose middles never reached the disk.
:func:`save_in_background` writes on a thread (files written and hashed while the caller searches);
a :func:`load` of the same entry in this process, :func:`wait` and the interpreter's exit (the
thread is not a daemon) wait for it. A build that will be cached starts the entry's temporary
folder first (:class:`Staging`); the build's arrays are in RAM, and the writer saves them all. A temporary
folder whose process is gone (killed mid-build) is removed when the next build or load of the same key
starts. (The postings' two arrays were once scattered straight into the folder's files, memory-mapped:
at MS MARCO's 8.8M passages, 3.2 GB of dirty mapped pages that writeback cleaned while the scatter was
still writing them, each written page then faulting again: in RAM the 8.8M index stage takes ~6 s less,
the writer ~6 s more, overlapped with the search; docs/bm25.md, "Index cache".)

Loads are O(vocabulary), not O(postings), in what they read up front; the arrays are memory-mapped.
What a load checks (``verify="quick"``, the default): the manifest (format, key), the set of files,
every file's size, the sha256 of every file's ends (the whole file when it is under twice
:data:`END_BYTES`: terms and small indexes are checked byte for byte), the ``.npy`` headers
(dtype, shape), the number of terms and their UTF-8 (the terms are kept as the file's bytes, a
:class:`~retrievers.bm25.sparse_index.TermList`: their strings are made when first read, and the
compiled query encoder reads the bytes), and the arrays against each other (SparseIndex.validate: sizes,
``indptr`` ascending from 0 to the number of postings, each term's documents strictly ascending and
in range -- what search needs to read and write in bounds). What it does not check: bytes in the middle of a large array, e.g.
a flipped score, which would change results without breaking search. ``verify="full"`` (or
``HARNESS_BM25_VERIFY=full``) also compares every file's CRC-32 (the whole content: it catches
accidental damage, as the CRC-32 footers of Lucene's index files do; at ~12 GB/s with isal where a
sha256 of the 362 MB of a 1M-document index cost ~0.33 CPU-s on every cold build). Anything that fails makes
:func:`load` raise :class:`CacheCorrupt`, and the caller rebuilds.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import logging
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from harness.atomic import build_lock as atomic_build_lock
from harness.atomic import remove_abandoned, seal, write_pieces, writer_tag
from harness.background import PendingWrites
from harness.checksums import crc32
from retrievers.bm25.sparse_index import InvalidIndex, SparseIndex, TermList

FORMAT_VERSION = 4  # 3: bounds.npy (the compiled search's pruning bounds), id_rank.npy (the ids' string order); 4: crc32 for sha256
_ARRAYS = ("indptr", "indices", "data", "doc_lengths", "nonoccurrence", "bounds", "id_rank", "id_order")
_REQUIRED = frozenset({"terms.txt", "indptr.npy", "indices.npy", "data.npy", "doc_lengths.npy"})  # in every entry
END_BYTES = 1 << 16  # the ends of a file hashed on every load
VERIFY_ENV = "HARNESS_BM25_VERIFY"


log = logging.getLogger(__name__)
_pending = PendingWrites()  # entry folder -> the thread writing it


class CacheCorrupt(Exception):
    """A cache entry is incomplete or does not match its manifest."""


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir`` when given, else the harness cache root (``$HARNESS_CACHE_DIR`` or the user cache)."""
    if cache_dir is not None:
        return Path(os.path.expanduser(cache_dir))
    from harness.cache import cache_root as harness_root

    return harness_root()


def cache_key(corpus_id: str, settings: dict, n_docs: int | None = None) -> str:
    """The entry of the corpus identified by ``corpus_id`` (``Corpus.fingerprint``, or the digest of
    its content) with ``n_docs`` documents, indexed with ``settings``."""
    blob = json.dumps({"format": FORMAT_VERSION, "corpus": corpus_id, "n_docs": n_docs, "settings": settings},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def ends_sha256(path: Path, size: int) -> str:
    """sha256 of the first and the last :data:`END_BYTES` of a file of ``size`` bytes (the whole file
    when it is shorter than both)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        if size <= 2 * END_BYTES:
            digest.update(handle.read())
        else:
            digest.update(handle.read(END_BYTES))
            handle.seek(size - END_BYTES)
            digest.update(handle.read(END_BYTES))
    return digest.hexdigest()


def verify_mode(verify: str | None = None) -> str:
    mode = verify or os.environ.get(VERIFY_ENV) or "quick"
    if mode not in ("quick", "full"):
        raise ValueError(f"{VERIFY_ENV} must be 'quick' or 'full', got {mode!r}")
    return mode


def entry_dir(root: Path, key: str) -> Path:
    return root / "bm25" / key


class Staging:
    """The temporary folder of an entry about to be built (``.<key>.<pid>-<host>.<random>.tmp`` beside it),
    made before the build (this key's folders of killed builds are removed first) and filled by :func:`save`."""

    def __init__(self, root: Path, key: str):
        final = entry_dir(root, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(final.parent, key)  # this key's staging and save folders of killed builds
        self.folder = Path(tempfile.mkdtemp(prefix=f".{key}.{writer_tag()}.", suffix=".tmp", dir=final.parent))

    @classmethod
    def begin(cls, root: Path, key: str) -> "Staging | None":
        """A staging folder, or None when it cannot be made (a read-only cache root: the cache write
        fails later as it would have)."""
        try:
            return cls(root, key)
        except OSError as exc:  # (the write that follows the build says so, as a warning)
            log.debug("could not start the BM25 index cache entry under %s: %s", root, exc)
            return None

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def save(index: SparseIndex, root: Path, key: str, settings: dict, staging: Staging | None = None,
         versions: dict | None = None) -> Path:
    """Write ``index`` under ``root`` atomically; returns the entry folder. ``staging``: the entry's
    temporary folder when the build started it (written into); ``versions``:
    the versions of the libraries that built it (name -> version), recorded in the manifest."""
    final = entry_dir(root, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = staging.folder if staging is not None else Path(  # (named with the pid, as Staging's: see remove_abandoned)
        tempfile.mkdtemp(prefix=f".{key}.{writer_tag()}.", suffix=".tmp", dir=final.parent))
    try:
        if any("\n" in t for t in index.terms):
            raise ValueError("a term contains a newline")  # cannot happen with the built-in tokenizers
        blobs = {"terms.txt": "\n".join(index.terms).encode("utf-8", "surrogatepass"),
                 **{f"{name}.npy": array for name, array in index.arrays().items()}}
        files = dict(sorted(_write_files(tmp, blobs)))
        manifest = {"format": FORMAT_VERSION, "key": key, "settings": settings, "n_docs": index.n_docs,
                    "n_terms": index.n_terms, "files": files, **({"versions": versions} if versions else {})}
        with open(tmp / "manifest.json", "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.exists():  # not a concurrent writer's finished entry: a real error
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished the same entry first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _nbytes(blob) -> int:
    return blob.nbytes if isinstance(blob, np.ndarray) else len(blob)


def _write_files(folder: Path, blobs: dict) -> list[tuple[str, dict]]:
    """:func:`_write_file` of each ``name: blob`` into ``folder``, two at a time, the largest first: this
    thread and one more (a plain thread, not a ``concurrent.futures`` pool: the writer runs on while the
    interpreter shuts down, when a pool refuses new work). The first error is raised once both are done."""
    queue = sorted(blobs, key=lambda name: -_nbytes(blobs[name]))
    lock, written, errors = threading.Lock(), [], []

    def work() -> None:
        while True:
            with lock:
                if not queue or errors:
                    return
                name = queue.pop(0)
            try:
                record = _write_file(folder / name, blobs[name])
            except BaseException as exc:  # (raised by the caller, once both are done)
                with lock:
                    errors.append(exc)
                return
            with lock:
                written.append(record)
    other = threading.Thread(target=work, name=f"{threading.current_thread().name}-2")
    try:
        other.start()
    except RuntimeError:  # (Python 3.12+ starts no thread once the interpreter shuts down: one at a time)
        other = None
    try:
        work()
    finally:
        if other is not None:
            other.join()
    if errors:
        raise errors[0]
    return written


def _save_npy(handle, array: np.ndarray) -> None:
    """``np.save(handle, array)``, byte for byte, a C-contiguous array's data written in pieces
    (:func:`harness.atomic.write_pieces`: np.save writes it in one call, which cost a 1M-document cold run
    ~0.3-0.8 CPU-s more for the index's 362 MB)."""
    from numpy.lib import format as npy

    if (not array.flags.c_contiguous or array.dtype.hasobject or array.dtype.kind in "Mm"
            or (array.size == 0 and array.ndim > 1)):
        np.save(handle, array, allow_pickle=False)  # (no buffer of plain bytes to write: np.save's own way)
        return
    header = io.BytesIO()
    try:  # (np.save's choice: version 1.0 whenever the header fits it, as it does for any 1-D array)
        npy.write_array_header_1_0(header, npy.header_data_from_array_1_0(array))
    except ValueError:
        np.save(handle, array, allow_pickle=False)
        return
    handle.write(header.getvalue())
    write_pieces(handle, array)


def _write_file(path: Path, blob) -> tuple[str, dict]:
    """(file name, its manifest record) of ``blob`` (bytes, or an array saved as ``.npy``) written to ``path``
    and sealed: on disk before the manifest that vouches for it (a power loss could leave zeros inside an
    array, which a quick load's ends and sizes do not see)."""
    with open(path, "wb") as handle:
        if isinstance(blob, np.ndarray):
            _save_npy(handle, blob)
        else:
            write_pieces(handle, blob)
    seal(path)
    size = path.stat().st_size
    return path.name, {"bytes": size, "ends_sha256": ends_sha256(path, size), "crc32": crc32(path)}


def save_in_background(index: SparseIndex, root: Path, key: str, settings: dict,
                       staging: Staging | None = None,
                       on_failure: Callable[[OSError], None] | None = None,
                       on_done: Callable[[], None] | None = None, versions: dict | None = None) -> threading.Thread:
    """:func:`save` on a (non-daemon) thread (harness.background); a failure to write (read-only or
    full disk) is logged and passed to ``on_failure`` (before the write counts as finished: a
    :func:`wait` for the entry returns after it); ``on_done`` is called last, whatever happened (the
    entry's :func:`build_lock` released)."""
    def write() -> None:
        try:
            save(index, root, key, settings, staging, versions)
        except OSError as exc:  # a read-only or full disk must not stop the run
            log.warning("could not write the BM25 index cache under %s: %s", root, exc)
            if on_failure is not None:
                on_failure(exc)
        finally:
            if on_done is not None:
                on_done()

    return _pending.start(entry_dir(root, key), write, name=f"bm25-cache-{key[:8]}")


def build_lock(root: Path, key: str, on_wait: Callable[[], None] | None = None) -> Callable[[], None]:
    """Take the build lock of entry ``key`` (``<root>/.locks/<key>.lock``: :func:`harness.atomic.build_lock`);
    returns its release."""
    return atomic_build_lock(Path(root) / ".locks" / f"{key}.lock", on_wait)


def wait(folder: Path | None = None) -> None:
    """Wait until the background write of entry ``folder`` (every one when None) is finished."""
    _pending.wait(folder)


def load(root: Path, key: str, verify: str | None = None, postings_check=None) -> SparseIndex | None:
    """The cached index for ``key`` (arrays memory-mapped); None when absent; :class:`CacheCorrupt`
    when damaged. ``verify``: ``quick`` or ``full`` (default ``$HARNESS_BM25_VERIFY``, else quick);
    see the module docstring for what each checks. ``postings_check``: what SparseIndex.validate
    checks the postings with (the engine's; default numpy)."""
    mode = verify_mode(verify)
    folder = entry_dir(root, key)
    wait(folder)
    if not folder.is_dir():
        return None
    # a killed build's staging folder of this key (as large as the index): removed here too, as every later run
    # of a key that another process finished is a hit and never starts the build that would remove it
    remove_abandoned(folder.parent, key)
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        files = manifest["files"]
        if manifest.get("format") != FORMAT_VERSION or manifest.get("key") != key:
            raise CacheCorrupt("manifest format or key mismatch")
        present = {p.name for p in folder.iterdir()} - {"manifest.json"}
        if present != set(files):
            raise CacheCorrupt(f"files differ from the manifest: {sorted(present ^ set(files))}")
        if not _REQUIRED <= set(files):
            raise CacheCorrupt(f"missing files: {sorted(_REQUIRED - set(files))}")
        for name, meta in files.items():
            path = folder / name
            size = path.stat().st_size
            if size != meta["bytes"] or ends_sha256(path, size) != meta["ends_sha256"]:
                raise CacheCorrupt(f"{name} does not match its checksum")
            if mode == "full" and crc32(path) != meta["crc32"]:
                raise CacheCorrupt(f"{name} does not match its full checksum")
        n_docs = int(manifest["n_docs"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CacheCorrupt(f"unreadable manifest or file: {exc}") from None
    try:
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
                  for name in _ARRAYS if f"{name}.npy" in files}
        blob = (folder / "terms.txt").read_bytes()
    except (OSError, ValueError) as exc:
        raise CacheCorrupt(f"unreadable array: {exc}") from None
    try:  # the terms' strings are made when first read (the compiled query encoder reads the bytes)
        terms = TermList(blob, int(manifest["n_terms"]))
    except (ValueError, TypeError, KeyError):  # (UnicodeDecodeError too)
        raise CacheCorrupt("terms.txt does not hold n_terms terms") from None
    index = SparseIndex(terms=terms, indptr=arrays["indptr"], indices=arrays["indices"], data=arrays["data"],
                        doc_lengths=arrays["doc_lengths"], nonoccurrence=arrays.get("nonoccurrence"),
                        n_docs=n_docs, bounds=arrays.get("bounds"), id_rank=arrays.get("id_rank"),
                        id_order=arrays.get("id_order"))
    try:
        return index.validate(postings_check)  # once, here: search trusts it
    except InvalidIndex as exc:
        raise CacheCorrupt(f"inconsistent arrays: {exc}") from None


def recorded_versions(folder: Path) -> dict[str, str] | None:
    """The versions of the libraries that built the entry in ``folder`` (its manifest's ``versions``: name -> version),
    None where none is recorded (an entry written before they were) or the manifest is unreadable. No version
    is in the key (harness.versions.computed_with): an entry one version built is read by a run of another,
    which reports these (``index_versions``)."""
    from harness.versions import versions_in

    return versions_in(Path(folder) / "manifest.json")


def discard(root: Path, key: str) -> None:
    shutil.rmtree(entry_dir(root, key), ignore_errors=True)
