"""Option parsing shared by commands: k lists, metric lists, ``key=value`` parameters."""

from __future__ import annotations

import json

from harness.errors import HarnessError
from harness.evaluation import DEFAULT_K


def parse_k(text: str | None) -> list[int]:
    if not text:
        return list(DEFAULT_K)
    try:
        ks = sorted({int(part) for part in text.replace(" ", "").split(",") if part})
    except ValueError:
        raise HarnessError(f"--k takes comma-separated integers, e.g. 1,3,5,10; got {text!r}") from None
    if not ks or ks[0] < 1:
        raise HarnessError(f"--k values must be >= 1; got {text!r}")
    return ks


def parse_params(items: list[str] | None) -> dict:
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HarnessError(f"--param takes key=value; got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params
