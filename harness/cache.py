"""Where the harness keeps caches (dataset downloads, embeddings, indexes): one root folder.

Root = ``$HARNESS_CACHE_DIR`` when set, else the platform's user cache dir for retrieval-harness
(``~/.cache/retrieval-harness`` on Linux, honouring ``$XDG_CACHE_HOME``). Each kind of cache
lives in its own subfolder: ``datasets/``, ``embeddings/``, ...
"""

from __future__ import annotations

import os
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
