"""Where the harness keeps caches (embeddings, downloads): one root folder, overridable.

Root = ``$HARNESS_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/retrieval-harness``, else
``~/.cache/retrieval-harness``. Each kind of cache lives in its own subfolder (``embeddings/``, ...).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "HARNESS_CACHE_DIR"
APP_NAME = "retrieval-harness"


def cache_root() -> Path:
    """The cache root folder (not created)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / APP_NAME


def cache_dir(kind: str) -> Path:
    """``<root>/<kind>``, e.g. ``cache_dir("embeddings")`` (not created)."""
    return cache_root() / kind
