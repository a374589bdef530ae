"""File checksums, streamed in blocks (the corpus of a large dataset never sits in memory)."""

from __future__ import annotations

import hashlib
import os


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes with ``algorithm`` (any name hashlib knows: sha256, md5, ...)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256(path: str | os.PathLike) -> str:
    return file_digest(path, "sha256")
