"""Find a retriever by name: built-ins, the ``retrieval_harness.retrievers`` entry-point group, or
a ``module:Class`` spec."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from harness.errors import HarnessError
from retrievers.base import Retriever

ENTRY_POINT_GROUP = "retrieval_harness.retrievers"

# name -> "module:Class"; imported lazily so that e.g. BM25 never imports torch.
BUILTIN = {
    "bm25": "retrievers.bm25:BM25Retriever",
    "run-file": "retrievers.run_file:RunFileRetriever",
}


def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    return sorted({*BUILTIN, *_plugins()})


def load_class(spec: str) -> type[Retriever]:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise HarnessError(f"cannot load retriever {spec!r}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Retriever)):
        raise HarnessError(f"{spec!r} is not a subclass of retrievers.Retriever")
    return cls


def retriever_class(name: str) -> type[Retriever]:
    """The class behind a built-in name, a plugin name or a ``module:Class`` spec."""
    spec = BUILTIN.get(name) or _plugins().get(name) or (name if ":" in name else None)
    if spec is None:
        raise HarnessError(f"unknown retriever {name!r}; available: {', '.join(available())}, or module:Class")
    return load_class(spec)


def create(name: str, **params) -> Retriever:
    """Instantiate a retriever by built-in name, plugin name or ``module:Class``."""
    cls = retriever_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise HarnessError(f"bad parameters for retriever {name!r}: {exc}") from None
