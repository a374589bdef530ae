"""Metric value objects and their registry.

A metric is a small frozen object such as ``NDCG(k=10)`` whose canonical name is ``NDCG@10``
(BEIR's spelling). ``parse_metric`` accepts the canonical names and common aliases (``nDCG@10``,
``ndcg_cut_10``, ``P_10``, ``recall.100`` ...). Each metric maps a :class:`Judgments` to one value
per evaluated query.

A family may come in variants named by a suffix (``NDCG_exp@10``, ``DCG_jarvelin@10``); the
default variant (the first of ``variants``) is left out of the canonical name. A family with a
cutoff may name a sibling for the whole ranking (``MAP`` without ``@k`` is ``AP``) and vice versa
(``AP@10`` is ``MAP@10``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.evaluation.judgments import Judgments

REGISTRY: dict[str, type["Metric"]] = {}
ALIASES: dict[str, str] = {}
_MAX_K = 2**63 - 1


@dataclass(frozen=True)
class Metric:
    """Base class: ``family`` is the canonical prefix, ``k`` the rank cutoff (None = whole ranking)."""

    k: int | None = None
    family: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    needs_k: ClassVar[bool] = True
    variants: ClassVar[tuple[str, ...]] = ()  # name suffixes; the first is the default
    whole_ranking_form: ClassVar[str | None] = None  # family to use when no cutoff is given
    cutoff_form: ClassVar[str | None] = None  # family to use when a cutoff is given
    whole_ranking_name: ClassVar[str | None] = None  # a whole-ranking sibling named only in the refusal of
    # the family without a cutoff (NDCG: NDCG_all), where ``whole_ranking_form`` would parse to it
    levels: ClassVar[tuple[float, ...]] = ()  # a family named by a level (iprec_at_recall_0.10), not a cutoff:
    # the levels its name without one stands for in a metric list
    counts: ClassVar[str | None] = None  # what the family counts, when it is no quality measure (num_ret,
    # Judged: a higher value is no better system; harness/compare/measures.py), else None

    @classmethod
    def make(cls, k: int | None, variant: str | None = None) -> "Metric":
        """Construct from a parsed name; families with variants override this."""
        if variant is not None:
            raise ValueError(f"{cls.family} has no variants")
        return cls(k)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.family:
            REGISTRY[cls.family] = cls
            for alias in (cls.family, *cls.aliases):
                ALIASES[alias.lower()] = cls.family

    def __post_init__(self) -> None:
        stem = self.name.partition("@")[0]  # the family with its variant: NDCG_exp, not NDCG
        if self.needs_k and (self.k is None or self.k < 1):
            whole = f"{self.whole_ranking_name}{stem[len(self.family):]}" if self.whole_ranking_name else None
            raise ValueError(f"{stem} needs a cutoff k >= 1, e.g. {stem}@10"
                             + (f" (over the whole ranking: {whole})" if whole and self.k is None else ""))
        if not self.needs_k and self.k is not None:
            raise ValueError(f"{stem} takes no cutoff")
        if self.k is not None and self.k > _MAX_K:  # (ranks and counts are int64)
            raise ValueError(f"{self.family} cutoff {self.k} is too large (at most {_MAX_K})")

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


# ASCII only: a cutoff in other digits (``P@５``) or a Unicode blank is refused, as ``--k`` refuses it.
_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z_\-]*?)(?:\s*(?:@|_cut_|_cut\.|\.|_)\s*(\d+))?\s*$", re.ASCII)
_RANX_LEVEL = re.compile(r"-l(\d+)\s*$", re.ASCII)  # ranx's relevance level: ndcg@10-l2, map-l2
# A family named by a level, a decimal number (iprec_at_recall_0.10, iprec_at_recall.0.1, IPrec@0.1).
_LEVEL_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z_\-]*?)\s*(?:@|_|\.)\s*(\d+\.\d*|\.\d+|\d+)\s*$", re.ASCII)

# trec_eval's gain parameters: ndcg_rel.1=3.5,2=9.0
_GAIN_FAMILIES = ("NDCG", "NDCG_all", "DCG", "ndcg_rel", "Rndcg")
_GAIN_PARAMETER = re.compile(r"^\s*([A-Za-z][A-Za-z_\-]*?)\s*[._]\s*(-?\d+\s*=.*?)\s*$", re.ASCII)

# trec_eval measures that are no per-query value, named with what to use instead.
NOT_PER_QUERY = {
    "num_q": "trec_eval's num_q counts the queries averaged over, not a per-query value: every result reports "
             "it (n_queries in metrics.json and metrics.md, the title of harness evaluate's table)",
    "gm_map": "trec_eval's gm_map, exp(mean(log(max(AP, 0.00001)))), is a geometric mean over queries, not a "
              "per-query value: every summary here (metrics.json, compare, check) is the mean of per-query values; "
              "compute it from AP's per-query values (metrics.json per_query, per_query.jsonl)",
    "runid": "trec_eval's runid prints the run's tag, not a measure",
}


def hundredths(value, family: str, what: str, upper: float, example: str) -> float:
    """``value`` as a float (-0.0 as 0.0) when it is a multiple of 0.01 from 0 to ``upper``, so that a name
    with 2 decimals (``iprec_at_recall_0.10``, ``set_F_0.50``) names one parameter; else a ValueError naming
    the family's ``what`` (recall level, weight, multiple) and ``example``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= upper \
            or round(value, 2) != value:
        raise ValueError(f"{family} {what} must be a multiple of 0.01 from 0 to {upper:g}, got {value!r} ({example})")
    return float(value) + 0.0


def parse_metric(text: str) -> Metric:
    """Parse ``NDCG@10``-style names (and aliases) into a metric object; ValueError if unknown."""
    leveled = _LEVEL_NAME.match(text)
    if leveled:  # iprec_at_recall_0.10 (P_10 goes on below: P takes no level)
        family, variant = _family_and_variant(leveled.group(1).lower())
        if family is not None and REGISTRY[family].levels:
            return REGISTRY[family].make(None, variant, level=float(leveled.group(2)))
    match = _NAME.match(text)
    if not match:
        lowered = text.strip(" \t\n\r\f\v").lower()
        if lowered in ALIASES:  # a name the pattern cannot split, such as 11pt_avg (a leading digit)
            return REGISTRY[ALIASES[lowered]].make(None)
        for alias, family in ALIASES.items():  # 11pt_avg.0.2,0.5,0.8, 11pt_avg@10: trec_eval's parameters
            if not _NAME.match(alias) and lowered.startswith(alias) and lowered[len(alias):][:1] in ("_", ".", "@"):
                raise ValueError(f"cannot parse metric name {text!r}: {family} takes no cutoff or level (trec_eval's "
                                 f"default levels only)")
        gains = _GAIN_PARAMETER.match(text)
        family = _family_and_variant(gains.group(1).lower())[0] if gains else None
        if family in _GAIN_FAMILIES:  # ndcg_rel.1=3.5,2=9.0
            raise ValueError(f"cannot parse metric name {text!r}: gain parameters ({gains.group(2)}) are not "
                             f"supported: {family}'s gain is the grade, trec_eval's default"
                             + (" (or 2^grade - 1: NDCG_exp, DCG_exp)" if family in _GAIN_FAMILIES[:3] else ""))
        if "(" in text:  # ir_measures' P(rel=2)@5, nDCG(judged_only)@10
            raise ValueError(f"cannot parse metric name {text!r}: metric parameters are not supported; binary "
                             "metrics take their relevance level from the relevance threshold "
                             "(--relevance-threshold; relevance_threshold in a bench config)")
        level = _RANX_LEVEL.search(text)
        if level and _NAME.match(text[:level.start()]):  # ranx's ndcg@10-l2: relevance level 2
            n = level.group(1)
            raise ValueError(f"cannot parse metric name {text!r}: ranx's relevance level suffix -l{n} is not "
                             f"supported; binary metrics take their relevance level from the relevance threshold "
                             f"(--relevance-threshold {n}; relevance_threshold={n} in Python or a bench config), "
                             f"and nDCG and DCG keep every grade as its gain (ranx's -l{n} drops grades below {n})")
        raise ValueError(f"cannot parse metric name {text!r} (expected e.g. NDCG@10); known: "
                         f"{', '.join(sorted(REGISTRY))}")
    family_text, k_text = match.group(1), match.group(2)
    family, variant = _family_and_variant(family_text.lower())
    if family is None and family_text.lower() in NOT_PER_QUERY:
        raise ValueError(f"metric {text!r} is not computed: {NOT_PER_QUERY[family_text.lower()]}")
    if family is None:
        raise ValueError(f"unknown metric {text!r}; known: {', '.join(sorted(REGISTRY))}")
    cls = REGISTRY[family]
    digits = None if k_text is None else k_text.lstrip("0") or "0"
    if digits is not None and len(digits) > 20:  # (int() refuses 4,300+ digits)
        raise ValueError(f"{family} cutoff {digits[:20]}... is too large (at most {_MAX_K})")
    k = int(digits) if digits is not None else None
    if k is None and cls.needs_k and cls.whole_ranking_form:
        cls = REGISTRY[cls.whole_ranking_form]
    elif k is not None and not cls.needs_k and cls.cutoff_form:
        cls = REGISTRY[cls.cutoff_form]
    return cls.make(k, variant)


def _family_and_variant(name: str) -> tuple[str | None, str | None]:
    """``ndcg_exp`` -> (``NDCG``, ``exp``); ``ndcg`` -> (``NDCG``, None); unknown -> (None, None)."""
    family = ALIASES.get(name) or ALIASES.get(name.rstrip("_"))
    if family is not None:
        return family, None
    base, _, suffix = name.rpartition("_")
    family = ALIASES.get(base)
    if family is not None and suffix in REGISTRY[family].variants:
        return family, suffix
    return None, None


def takes_cutoff(text: str) -> bool:
    """Whether ``text`` is a family name without ``@k`` whose family takes a cutoff (``NDCG_exp``,
    ``MAP``; not ``bpref``, ``AP`` or ``P@10``): lists of families expand it over their cutoffs."""
    match = _NAME.match(text)
    if not match or match.group(2) is not None:
        return False
    family, _ = _family_and_variant(match.group(1).lower())
    if family is None:
        return False
    return REGISTRY[family].needs_k


def level_names(text: str) -> list[str] | None:
    """The names a family named by a level stands for in a metric list when ``text`` gives none
    (``iprec_at_recall``: trec_eval's 11, ``iprec_at_recall_0.00`` ... ``iprec_at_recall_1.00``); None
    for any other name."""
    match = _NAME.match(text)
    if not match or match.group(2) is not None:
        return None
    family, variant = _family_and_variant(match.group(1).lower())
    if family is None or not REGISTRY[family].levels:
        return None
    cls = REGISTRY[family]
    return [cls.make(None, variant, level=level).name for level in cls.levels]


def evaluated_names(text: str) -> list[str]:
    """The names of the metrics one name stands for where a single name is read (``harness compare -m``,
    ``check -m``, ``report -m``, a bench config's ``metrics``, ``fuse --optimize --metric``), as the evaluator
    names them: a name read as ``harness evaluate -m`` reads it (``nDCG@10``, ``ndcg_cut_10``, ``P.10``,
    ``P_10``: ``NDCG@10``, ``P@10``), a family named by a level without one at each of its levels as in
    every metric list (``iprec_at_recall``: the 11 of ``iprec_at_recall_0.00`` ... ``iprec_at_recall_1.00``),
    and any other family as one name alone under trec_eval's rule (:func:`parse_metric`: ``map`` is ``AP``,
    ``mrr`` and ``recip_rank`` are ``RR``). ValueError when it names no metric (an unknown name, a family
    that needs a cutoff: ``NDCG``)."""
    return level_names(text) or [parse_metric(text).name]
