"""Check a component's params against its constructor's signature: a bench or pipeline config's (TOML),
and the CLI's --param values (:func:`command_line_params`). In the core, not in harness.bench: `harness
run` checks its --param values without importing the benchmark package.

A parameter the constructor does not take is refused (unless it takes ``**kwargs``); a required
one that is missing is reported; a value whose type contradicts the annotation (or, without one,
the default's type) is refused: ``expected a number, got "abc"``. Annotations this module does not
understand (a model object, a protocol) accept anything: the constructor has the last word.
"""

from __future__ import annotations

import inspect
import os
import types
import typing
from pathlib import PurePath
from typing import Any

from harness.errors import ConfigError, HarnessError, render
from harness.registry import retriever_class

_SIMPLE = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    tuple: "a list",
    dict: "a table",
}


def _matches(value: Any, annotation: Any) -> tuple[bool, str | None]:
    """(value fits, description of what is expected); description None = not judged."""
    if annotation is Any or annotation is inspect.Parameter.empty:
        return True, None
    origin = typing.get_origin(annotation)
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(annotation, types.UnionType)):
        results = [_matches(value, member) for member in typing.get_args(annotation)]
        if any(description is None for _, description in results):
            return True, None  # a member we cannot judge: accept
        descriptions = [d for (_, d), member in zip(results, typing.get_args(annotation)) if member is not type(None)]
        return any(ok for ok, _ in results), " or ".join(dict.fromkeys(descriptions))
    if annotation is type(None):
        return value is None, "null"
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        return value in choices, "one of " + ", ".join(render(c) for c in choices)
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return isinstance(value, list), "a list"
    if origin is dict or annotation is dict:
        return isinstance(value, dict), "a table"
    if annotation is os.PathLike or (isinstance(annotation, type) and issubclass(annotation, PurePath)):
        return isinstance(value, str), "a string"  # a path
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool), _SIMPLE[float]
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool), _SIMPLE[int]
    if annotation in _SIMPLE:
        return isinstance(value, annotation), _SIMPLE[annotation]
    return True, None


def _expected_type(parameter: inspect.Parameter, hints: dict) -> Any:
    if parameter.name in hints:
        return hints[parameter.name]
    default = parameter.default
    if default is inspect.Parameter.empty or default is None:
        return inspect.Parameter.empty
    kind = type(default)
    return float if kind is int else kind  # an unannotated integer default may well take 0.5: accept numbers


def _hints_one_by_one(function) -> dict:
    """The annotations of ``function`` that resolve, each on its own (``typing.get_type_hints`` fails
    for all when one names what its module imports only under ``TYPE_CHECKING``, and every parameter's
    check was dropped); one that does not resolve is left out (its default's type is checked instead)."""
    hints = {}
    for name, annotation in getattr(function, "__annotations__", {}).items():
        stub = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            hints.update(typing.get_type_hints(stub, globalns=getattr(function, "__globals__", {})))
        except Exception:  # noqa: BLE001 - not resolvable here
            continue
    return hints


def _constructor(cls: type) -> tuple[dict[str, inspect.Parameter], dict, bool] | None:
    """(named parameters, type hints, takes ``**kwargs``) of ``cls.__init__``; None when it has no
    signature to read."""
    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return None
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # one unresolvable annotation (a name imported under TYPE_CHECKING): the others, one by one
        hints = _hints_one_by_one(cls.__init__)
    accepted = {p.name: p for p in list(signature.parameters.values())[1:]
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return accepted, hints, any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())


def check_params(cls: type, params: dict, source: str, key: str, name: str, what: str = "retriever") -> None:
    """Raise ConfigError (``<source>: <key>.<param>: ...``) for params ``cls(**params)`` would not take
    (``what``: the kind of component, retriever or reranker, as the message names it)."""
    constructor = _constructor(cls)
    if constructor is None:
        return
    accepted, hints, open_ended = constructor
    for param, value in params.items():
        where = f"{key}.params.{param}"
        if param not in accepted:
            if open_ended:
                continue
            raise ConfigError(source, where, f"unknown parameter for {what} {render(name)} "
                                             f"(it takes: {', '.join(accepted) or 'no parameters'})")
        ok, description = _matches(value, _expected_type(accepted[param], hints))
        if not ok:
            raise ConfigError(source, where, f"expected {description}, got {render(value)}")
    for param, p in accepted.items():
        if p.default is inspect.Parameter.empty and param not in params:
            raise ConfigError(source, f"{key}.params.{param}", f"missing required parameter of {what} {render(name)}")


def check_retriever(kind: str, params: dict, source: str, key: str) -> type:
    """Resolve the retriever ``kind`` (a registered name or ``module:Class``) to its class and check
    ``params`` against it; returns the class."""
    try:
        cls = retriever_class(kind)
    except HarnessError as exc:
        raise ConfigError(source, f"{key}.type", str(exc)) from None
    check_params(cls, params, source, key, kind)
    return cls


def command_line_params(cls: type, params: dict, texts: dict[str, str], name: str, what: str = "retriever") -> dict:
    """``--param key=value`` values (``params``: each value read as JSON where it is JSON, else its
    text; ``texts``: the texts as typed) checked against ``cls``'s constructor as a config's params
    are (:func:`check_params`), so that ``-p lossy_lengths=False`` (not JSON's ``false``: the string
    "False", which ``bool()`` reads as true) is refused instead of silently meaning the opposite. A
    value JSON read as a type the annotation does not take but whose text it does (``-p revision=1234567``
    where a str is annotated) is taken as its text. Returns the params to construct with; a mismatch
    is a HarnessError ``--param NAME: expected ..., got ...``."""
    constructor = _constructor(cls)
    if constructor is None:
        return params
    accepted, hints, _ = constructor
    out = dict(params)
    for param, value in params.items():
        if param in accepted:
            expected = _expected_type(accepted[param], hints)
            if not _matches(value, expected)[0] and _matches(texts[param], expected)[0]:
                out[param] = texts[param]
    try:
        check_params(cls, out, "--param", "", name, what)
    except ConfigError as exc:
        raise HarnessError(f"--param {exc.key.removeprefix('.params.')}: {exc.message}") from None
    return out
