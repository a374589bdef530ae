"""Metric value objects and their registry.

A metric is a small frozen object such as ``NDCG(k=10)`` whose canonical name is ``NDCG@10``
(BEIR's spelling). ``parse_metric`` accepts the canonical names and common aliases (``nDCG@10``,
``ndcg_cut_10``, ``P_10``, ``recall.100`` ...). Each metric maps a :class:`Judgments` to one value
per evaluated query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.evaluation.judgments import Judgments

REGISTRY: dict[str, type["Metric"]] = {}
ALIASES: dict[str, str] = {}


@dataclass(frozen=True)
class Metric:
    """Base class: ``family`` is the canonical prefix, ``k`` the rank cutoff (None = whole ranking)."""

    k: int | None = None
    family: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    needs_k: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.family:
            REGISTRY[cls.family] = cls
            for alias in (cls.family, *cls.aliases):
                ALIASES[alias.lower()] = cls.family

    def __post_init__(self) -> None:
        if self.needs_k and (self.k is None or self.k < 1):
            raise ValueError(f"{self.family} needs a cutoff k >= 1, e.g. {self.family}@10")
        if not self.needs_k and self.k is not None:
            raise ValueError(f"{self.family} takes no cutoff")

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __str__(self) -> str:
        return self.name

    def __call__(self, j: Judgments) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def safe_divide(numerator: np.ndarray, denominator: np.ndarray | float) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    denominator = np.broadcast_to(np.asarray(denominator, dtype=np.float64), np.shape(numerator))
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z_\-]*?)(?:\s*(?:@|_cut_|_cut\.|\.|_)\s*(\d+))?\s*$")


def parse_metric(text: str) -> Metric:
    """Parse ``NDCG@10``-style names (and aliases) into a metric object; ValueError if unknown."""
    match = _NAME.match(text)
    if not match:
        raise ValueError(f"cannot parse metric name {text!r} (expected e.g. NDCG@10)")
    family_text, k_text = match.group(1), match.group(2)
    family = ALIASES.get(family_text.lower()) or ALIASES.get(family_text.lower().rstrip("_"))
    if family is None:
        raise ValueError(f"unknown metric {text!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[family](int(k_text) if k_text is not None else None)
