"""Weighted F of the whole retrieved set (trec_eval's ``set_F``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, hundredths, safe_divide

_MAX_WEIGHT = 100.0


@dataclass(frozen=True)
class SetF(Metric):
    """set_F_x = (x + 1) * P * R / (x * P + R),  P = set_P = num_rel_ret / num_ret,  R = set_recall =
    num_rel_ret / R; 0 when no relevant document is retrieved.

    x weighs recall against precision (trec_eval: "the relative importance of R to P"): x = 1 (the
    default, ``set_F``) is F1 = 2 P R / (P + R), x = 0 is P. In van Rijsbergen's F_beta, x is beta^2:
    trec_eval's ``set_F.0.5`` (x = 0.5) is F_beta for beta = 0.707..., not F0.5 (that is x = 0.25).
    trec_eval's ``set_F`` (``m_set_F.c``, the same in 9 and 10, computed in that order), ir_measures'
    ``SetF`` (its ``beta`` is this x, passed on to trec_eval).

    Names: ``set_F`` (x = 1), ``set_F_0.50`` (trec_eval 9 prints ``set_F_0.5``; canonical here with 2
    decimals), ``set_F.0.5``, ``set_F@0.5``, ``SetF@0.5``; x is a multiple of 0.01 from 0 to 100.
    """

    weight: float = 1.0
    family = "set_F"
    aliases = ("SetF",)
    needs_k = False
    levels: ClassVar[tuple[float, ...]] = (1.0,)  # the bare name in a metric list: set_F, x = 1

    @classmethod
    def make(cls, k: int | None, variant: str | None = None, level: float | None = None) -> "SetF":
        if variant is not None:
            raise ValueError(f"{cls.family} has no variants")
        return cls(k, 1.0 if level is None else level)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "weight", hundredths(self.weight, self.family, "weight", _MAX_WEIGHT,
                                                      f"e.g. {self.family}_0.50; {self.family} alone is weight 1"))

    @property
    def name(self) -> str:
        return self.family if self.weight == 1.0 else f"{self.family}_{self.weight:.2f}"

    def __call__(self, j: Judgments) -> np.ndarray:
        relevant_retrieved = j.per_query_sum(j.relevant_hits())
        p = safe_divide(relevant_retrieved, j.n_retrieved)
        r = safe_divide(relevant_retrieved, j.n_relevant)
        x = self.weight
        return safe_divide((x + 1.0) * p * r, x * p + r)
