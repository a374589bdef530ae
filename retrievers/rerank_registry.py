"""Find a reranker by name: built-ins, the ``retrieval_harness.rerankers`` entry-point group, or a
``module:Class`` spec (the rerankers' counterpart of :mod:`retrievers.registry`)."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from harness.errors import HarnessError
from retrievers.rerank.base import Reranker

ENTRY_POINT_GROUP = "retrieval_harness.rerankers"

# name -> "module:Class" (also declared as entry points in pyproject.toml); imported lazily.
BUILTIN = {
    "bi-encoder": "retrievers.rerank.bi_encoder:BiEncoderReranker",
    "cross-encoder": "retrievers.rerank.cross_encoder:CrossEncoderReranker",
}


def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    return sorted({*BUILTIN, *_plugins()})


def reranker_class(name: str) -> type[Reranker]:
    """The class behind a built-in name, a plugin name or a ``module:Class`` spec."""
    spec = BUILTIN.get(name) or _plugins().get(name) or (name if ":" in name else None)
    if spec is None:
        raise HarnessError(f"unknown reranker {name!r}; available: {', '.join(available())}, or module:Class")
    module_name, _, attr = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise HarnessError(f"cannot load reranker {spec!r}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Reranker)):
        raise HarnessError(f"{spec!r} is not a subclass of retrievers.rerank.Reranker")
    return cls


def create_reranker(name: str, **params) -> Reranker:
    """Instantiate a reranker by built-in name, plugin name or ``module:Class``."""
    cls = reranker_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise HarnessError(f"bad parameters for reranker {name!r}: {exc}") from None
