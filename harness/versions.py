"""Versions of the project, Python and key libraries, read from package metadata (no imports)."""

from __future__ import annotations

import platform
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

import harness

LIBRARIES = ("numpy", "rank-bm25", "bm25s", "PyStemmer", "sentence-transformers", "torch", "transformers",
             "faiss-cpu", "datasets")


def versions() -> dict[str, str]:
    """Name -> version (a new dict each call; the metadata is read once per process)."""
    return dict(_versions())


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    out = {"retrieval-harness": harness.__version__, "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out
