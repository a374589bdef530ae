"""On-disk cache of built BM25 indexes, keyed by corpus content + analyzer + scoring parameters.

Layout: ``<cache root>/bm25/<key>/`` holding ``terms.txt`` (one term a line), one ``.npy`` file per
index array, and ``manifest.json`` (format version, key, parameters, and the size and sha256 of
every file). The cache root is ``cache_dir`` when given, else ``$HARNESS_CACHE_DIR``, else
``$XDG_CACHE_HOME/retrieval-harness`` (default ``~/.cache/retrieval-harness``).

Writes are atomic: everything goes into a temporary sibling folder, which is renamed to ``<key>``
only when complete (manifest last), so an interrupted build leaves no half-written entry. On load
every file is checked against the manifest (size, sha256), then the index's arrays against each
other (SparseIndex.validate); anything missing, extra
or different makes :func:`load` raise :class:`CacheCorrupt`, and the caller rebuilds: a cache entry
is never trusted blindly.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from harness.checksums import sha256
from retrievers.bm25.sparse_index import InvalidIndex, SparseIndex

FORMAT_VERSION = 1
_ARRAYS = ("indptr", "indices", "data", "doc_lengths", "nonoccurrence")


class CacheCorrupt(Exception):
    """A cache entry is incomplete or does not match its manifest."""


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir`` when given, else the harness cache root (``$HARNESS_CACHE_DIR`` or the user cache)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    from harness.cache import cache_root as harness_root

    return harness_root()


def cache_key(corpus_sha256: str, settings: dict) -> str:
    blob = json.dumps({"format": FORMAT_VERSION, "corpus": corpus_sha256, "settings": settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def entry_dir(root: Path, key: str) -> Path:
    return root / "bm25" / key


def save(index: SparseIndex, root: Path, key: str, settings: dict) -> Path:
    """Write ``index`` under ``root`` atomically; returns the entry folder."""
    final = entry_dir(root, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=final.parent))
    try:
        files = {}
        terms_path = tmp / "terms.txt"
        if any("\n" in t for t in index.terms):
            raise ValueError("a term contains a newline")  # cannot happen with the built-in tokenizers
        terms_path.write_bytes("\n".join(index.terms).encode("utf-8", "surrogatepass"))
        for name, array in index.arrays().items():
            with open(tmp / f"{name}.npy", "wb") as handle:
                np.save(handle, array, allow_pickle=False)
        for path in sorted(tmp.iterdir()):
            files[path.name] = {"bytes": path.stat().st_size, "sha256": sha256(path)}
        manifest = {"format": FORMAT_VERSION, "key": key, "settings": settings, "n_docs": index.n_docs,
                    "n_terms": index.n_terms, "files": files}
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


def load(root: Path, key: str) -> SparseIndex | None:
    """The cached index for ``key``; None when absent; :class:`CacheCorrupt` when damaged."""
    folder = entry_dir(root, key)
    if not folder.is_dir():
        return None
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        files = manifest["files"]
        if manifest.get("format") != FORMAT_VERSION or manifest.get("key") != key:
            raise CacheCorrupt("manifest format or key mismatch")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CacheCorrupt(f"unreadable manifest: {exc}") from None
    present = {p.name for p in folder.iterdir()} - {"manifest.json"}
    if present != set(files):
        raise CacheCorrupt(f"files differ from the manifest: {sorted(present ^ set(files))}")
    for name, meta in files.items():
        path = folder / name
        if path.stat().st_size != meta["bytes"] or sha256(path) != meta["sha256"]:
            raise CacheCorrupt(f"{name} does not match its checksum")
    try:
        arrays = {name: np.load(folder / f"{name}.npy", allow_pickle=False)
                  for name in _ARRAYS if f"{name}.npy" in files}
        text = (folder / "terms.txt").read_bytes().decode("utf-8", "surrogatepass")
    except (OSError, ValueError) as exc:
        raise CacheCorrupt(f"unreadable array: {exc}") from None
    terms = text.split("\n") if text or manifest["n_terms"] else []
    index = SparseIndex(terms=terms, indptr=arrays["indptr"], indices=arrays["indices"], data=arrays["data"],
                        doc_lengths=arrays["doc_lengths"], nonoccurrence=arrays.get("nonoccurrence"),
                        n_docs=int(manifest["n_docs"]))
    if len(terms) != manifest["n_terms"]:
        raise CacheCorrupt("terms.txt does not hold n_terms terms")
    try:
        return index.validate()  # once, here: search trusts it
    except InvalidIndex as exc:
        raise CacheCorrupt(f"inconsistent arrays: {exc}") from None


def discard(root: Path, key: str) -> None:
    shutil.rmtree(entry_dir(root, key), ignore_errors=True)
