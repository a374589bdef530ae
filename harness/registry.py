"""Find a retriever or a reranker by name: the ``retrieval_harness.retrievers`` /
``retrieval_harness.rerankers`` entry-point groups, or a ``module:Class`` spec.

The built-ins (bm25, dense, run-file, ...; bi-encoder, cross-encoder) are registered in those groups
by this project's pyproject.toml exactly like a plugin, so the core never imports the ``retrievers``
package: a component's module is imported only when it is asked for (BM25 never imports torch).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from importlib.metadata import EntryPoint, entry_points

from harness.errors import HarnessError
from harness.reranker import Reranker
from harness.retriever import Retriever

ENTRY_POINT_GROUP = "retrieval_harness.retrievers"
RERANKER_GROUP = "retrieval_harness.rerankers"
_KINDS = {ENTRY_POINT_GROUP: ("retriever", Retriever, "retrievers.Retriever"),
          RERANKER_GROUP: ("reranker", Reranker, "retrievers.rerank.Reranker")}


def registered(group: str = ENTRY_POINT_GROUP) -> dict[str, str]:
    """Entry-point name -> ``module:Class`` of every installed component of ``group`` (built-ins included)."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def available(group: str = ENTRY_POINT_GROUP) -> list[str]:
    return sorted(registered(group))


def load_class(spec: str, group: str = ENTRY_POINT_GROUP) -> type:
    """The class ``spec`` names: ``module:Class``, read as an entry point's object reference is
    (``EntryPoint.pattern``: ``module:Outer.Inner``, spaces around the colon and ``[extras]`` allowed),
    refused with one line when it cannot be imported or is no usable component class."""
    kind, base, base_name = _KINDS[group]
    reference = EntryPoint.pattern.match(spec)
    if reference is not None and reference.group("attr"):
        module_name, attr = reference.group("module"), reference.group("attr")
    else:  # (not an object reference: imported as it is written, for the error it gives)
        module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = functools.reduce(getattr, attr.split("."), module)  # (Outer.Inner: attribute by attribute)
    except (ImportError, AttributeError) as exc:
        raise HarnessError(f"cannot load {kind} {spec!r}: {exc}") from None
    except Exception as exc:  # the module itself fails to import (a SyntaxError, a raise at import time, "")
        raise HarnessError(f"cannot load {kind} {spec!r}: {type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise HarnessError(f"{spec!r} is not a subclass of {base_name}")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise HarnessError(f"{spec!r} does not implement {base_name}: abstract method(s) {missing}")
    return cls


def component_class(name: str, group: str = ENTRY_POINT_GROUP) -> type:
    """The class behind a registered name or a ``module:Class`` spec. A plugin's entry point names its
    distribution, whose version metrics.json then records (:func:`plugin_versions`)."""
    found = entry_points(group=group)
    points = {ep.name: ep for ep in found}
    claims = {ep.value: ep for ep in found if ep.name == name}
    if len(claims) > 1:  # (which one the dict kept follows sys.path: `harness` and `python -c` differed)
        owners = ", ".join(sorted(f"{getattr(ep.dist, 'name', None)} ({value})" for value, ep in claims.items()))
        raise HarnessError(f"{_KINDS[group][0]} {name!r} is registered by more than one installed distribution: "
                           f"{owners}; name the one to run as module:Class")
    point = points.get(name)
    spec = point.value if point is not None else (name if ":" in name else None)
    if spec is None:
        hint = (", ".join(sorted(points)) if points else
                f"none registered (no {group} entry points: is retrieval-harness installed?)")
        raise HarnessError(f"unknown {_KINDS[group][0]} {name!r}; available: {hint}, or module:Class")
    cls = load_class(spec, group)
    dist = getattr(point, "dist", None)
    if dist is not None and re.sub(r"[-_.]+", "-", dist.name or "").lower() != "retrieval-harness":
        _DISTRIBUTIONS[cls] = (dist.name, dist.version)
    return cls


# The installed distribution (name, version) of each plugin class loaded through its entry point.
_DISTRIBUTIONS: dict[type, tuple[str, str]] = {}


def plugin_versions(cls: type) -> dict[str, str]:
    """``{distribution: version}`` of the installed plugin that registered ``cls`` (loaded by its entry
    point), for metrics.json's ``versions`` beside the harness's own; {} for a built-in or a
    ``module:Class`` on the import path."""
    return dict([_DISTRIBUTIONS[cls]]) if cls in _DISTRIBUTIONS else {}


def _create(name: str, group: str, params: dict):
    cls = component_class(name, group)
    try:
        return cls(**params)
    except TypeError as exc:
        raise HarnessError(f"bad parameters for {_KINDS[group][0]} {name!r}: {exc}") from None


def retriever_class(name: str) -> type[Retriever]:
    return component_class(name, ENTRY_POINT_GROUP)


def create(name: str, /, **params) -> Retriever:
    """Instantiate a retriever by registered name or ``module:Class`` (``name`` is positional-only: a
    retriever may take a parameter called ``name``)."""
    return _create(name, ENTRY_POINT_GROUP, params)


def create_reranker(name: str, /, **params) -> Reranker:
    """Instantiate a reranker by registered name or ``module:Class`` (``name`` positional-only, as for
    :func:`create`)."""
    return _create(name, RERANKER_GROUP, params)
