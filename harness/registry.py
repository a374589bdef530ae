"""Find a retriever by name: the ``retrieval_harness.retrievers`` entry-point group, or a
``module:Class`` spec.

The built-in retrievers (bm25, dense, run-file) are registered in that group by this project's
pyproject.toml exactly like a plugin, so the core never imports the ``retrievers`` package: a
retriever's module is imported only when it is asked for (BM25 never imports torch).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from harness.errors import HarnessError
from harness.retriever import Retriever

ENTRY_POINT_GROUP = "retrieval_harness.retrievers"


def registered() -> dict[str, str]:
    """Entry-point name -> ``module:Class`` of every installed retriever (built-ins included)."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    return sorted(registered())


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
    """The class behind a registered name or a ``module:Class`` spec."""
    known = registered()
    spec = known.get(name) or (name if ":" in name else None)
    if spec is None:
        hint = (", ".join(sorted(known)) if known else
                f"none registered (no {ENTRY_POINT_GROUP} entry points: is retrieval-harness installed?)")
        raise HarnessError(f"unknown retriever {name!r}; available: {hint}, or module:Class")
    return load_class(spec)


def create(name: str, **params) -> Retriever:
    """Instantiate a retriever by registered name or ``module:Class``."""
    cls = retriever_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise HarnessError(f"bad parameters for retriever {name!r}: {exc}") from None
