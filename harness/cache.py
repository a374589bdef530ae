"""Where the harness keeps caches (dataset downloads, embeddings, indexes): one root folder.

Root = ``$HARNESS_CACHE_DIR`` when set, else the platform's user cache dir for retrieval-harness
(``~/.cache/retrieval-harness`` on Linux, honouring ``$XDG_CACHE_HOME``). Each kind of cache
lives in its own subfolder (:data:`KINDS`: ``datasets/``, ``embeddings/``, ...); ``harness cache info``
shows what each holds and ``harness cache purge KIND`` removes one (docs/cache.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "HARNESS_CACHE_DIR"
APP_NAME = "retrieval-harness"


def cache_root() -> Path:
    """The cache root folder (not created). Read at call time, so a benchmark can set the variable."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(os.path.expanduser(override))  # (Path.expanduser raises on an unknown ~user)
    import pooch

    return Path(pooch.os_cache(APP_NAME))


def cache_dir(kind: str) -> Path:
    """``<root>/<kind>``, e.g. ``cache_dir("embeddings")`` (not created)."""
    return cache_root() / kind


# --------------------------------------------------------------------------- what the root holds
#: Each kind of cache, in the order ``harness cache info`` lists them: its folder under the root and what it holds.
KINDS = {
    "datasets": "downloaded BEIR zips (.downloads/) and the dataset folders unpacked from them",
    "corpora": "parsed corpora as Arrow files (corpus.jsonl(.gz) folders, ir_datasets collections)",
    "bm25": "BM25 indexes",
    "sqlite": "SQLite FTS5 databases (retriever sqlite)",
    "embeddings": "dense document embeddings, their faiss indexes, model digests",
    "sparse": "sparse (learned) document impacts",
    "pipelines": "pipeline stage runs",
}


@dataclass(frozen=True)
class Usage:
    kind: str
    folder: Path
    entries: int  # the folder's own entries (hidden ones, e.g. .downloads/ and temporary files, not counted)
    bytes: int  # every file below it (apparent sizes; links not followed)


def usage(kind: str) -> Usage:
    """How much ``<root>/<kind>`` holds (0 entries and bytes when it does not exist)."""
    folder = cache_dir(_known(kind))
    entries = total = 0
    try:
        entries = sum(1 for entry in os.scandir(folder) if not entry.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return Usage(kind, folder, 0, 0)
    for top, dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except FileNotFoundError:  # (removed meanwhile by another process's cleanup)
                pass
    return Usage(kind, folder, entries, total)


def purge(kind: str) -> Usage:
    """Remove ``<root>/<kind>`` and everything in it; returns what it held.

    The folder is first renamed to ``<root>/.<kind>.purge-<writer>`` and then deleted, so a process that
    looks meanwhile finds no entry rather than half of one (and rebuilds it); one left by a killed purge is
    removed by the next purge of that kind. The root itself is never removed (``$HARNESS_CACHE_DIR`` may
    name a folder that holds other things).

    A ``<root>/<kind>`` that is a symbolic link (the kind kept on another disk) stays, and so does the folder
    it names: the entries in that folder are moved into a hidden ``.purge-<writer>`` folder beside them, then
    deleted (the link was renamed aside, and rmtree refused it: the entries stayed, out of sight)."""
    import shutil

    from harness.atomic import writer_tag

    held = usage(kind)
    root = cache_root()
    for stale in root.glob(f".{kind}.purge-*") if root.is_dir() else ():
        if stale.is_symlink():  # (a link renamed aside by an earlier version: the link goes, not its folder)
            stale.unlink(missing_ok=True)
        else:
            shutil.rmtree(stale, ignore_errors=True)
    if not held.folder.is_dir():
        return held
    if held.folder.is_symlink():
        doomed = held.folder / f".purge-{writer_tag()}"
        doomed.mkdir()
        for name in os.listdir(held.folder):  # (one left by a killed purge of the link's folder included)
            if name != doomed.name:
                os.replace(held.folder / name, doomed / name)
        shutil.rmtree(doomed)
        return held
    doomed = root / f".{kind}.purge-{writer_tag()}"
    os.replace(held.folder, doomed)
    shutil.rmtree(doomed)
    return held


def _known(kind: str) -> str:
    if kind not in KINDS:
        from harness.errors import HarnessError

        raise HarnessError(f"unknown cache kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return kind
