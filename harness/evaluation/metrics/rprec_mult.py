"""Precision at multiples of R (trec_eval's ``Rprec_mult``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.evaluation.judgments import Judgments
from harness.evaluation.metrics.base import Metric, hundredths, safe_divide

# trec_eval's default multiples (``-m Rprec_mult``).
STANDARD_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_MAX_MULTIPLE = 100.0


@dataclass(frozen=True)
class RPrecMult(Metric):
    """Rprec_mult_m = P@c = |relevant documents in the top c| / c,  c = floor(m * R + 0.9); 0 when c = 0.

    R = relevant documents of the query; a ranking shorter than c counts as padded with non-relevant
    documents (num_rel_ret / c), as ``R-Prec``, which is ``Rprec_mult_1.00``. c is computed in double
    arithmetic as trec_eval's C, (long) (m * R + 0.9), in trec_eval 9 and 10 alike (``m_Rprec_mult.c``;
    10 rounds only ``iprec_at_recall`` and ``11pt_avg`` differently). trec_eval's ``Rprec_mult``.

    Names: ``Rprec_mult_0.20`` (trec_eval's printed name; canonical), ``Rprec_mult.0.2``,
    ``Rprec_mult@0.2``; m is a multiple of 0.01 from 0 to 100. In a metric list ``Rprec_mult`` alone
    stands for trec_eval's 10 multiples 0.20, 0.40 ... 2.00.
    """

    multiple: float | None = None
    family = "Rprec_mult"
    aliases = ("RPrecMult",)
    needs_k = False
    levels: ClassVar[tuple[float, ...]] = STANDARD_MULTIPLES  # a metric list's expansion of the bare name

    @classmethod
    def make(cls, k: int | None, variant: str | None = None, level: float | None = None) -> "RPrecMult":
        if variant is not None:
            raise ValueError(f"{cls.family} has no variants")
        return cls(k, level)

    def __post_init__(self) -> None:
        super().__post_init__()
        example = (f"e.g. {self.family}_0.20; in a metric list {self.family} alone stands for the 10 multiples "
                   "0.20 ... 2.00")
        if self.multiple is None:
            raise ValueError(f"{self.family} needs a multiple of R, {example}")
        object.__setattr__(self, "multiple", hundredths(self.multiple, self.family, "multiple", _MAX_MULTIPLE, example))

    @property
    def name(self) -> str:
        return self.family if self.multiple is None else f"{self.family}_{self.multiple:.2f}"

    def __call__(self, j: Judgments) -> np.ndarray:
        c = np.floor(self.multiple * j.n_relevant.astype(np.float64) + 0.9).astype(np.int64)
        within = j.relevant_hits() & (j.hit_rank <= c[j.hit_query])
        return safe_divide(j.per_query_sum(within), c)
