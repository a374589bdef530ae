"""The evaluator: a run and its qrels in, per-query values and means out.

Contract (the default reproduces trec_eval 9 as bundled in pytrec_eval, which produced BEIR's
published numbers):

* Ranking: score descending; equal scores ordered by document id descending (string order).
  ``semantics`` says how scores compare (:mod:`harness.evaluation.semantics`): ``trec_eval-9``
  (default) compares them as float32, as trec_eval 9 and pytrec_eval do, so 1.0000000001 and 1.0
  tie; ``trec_eval-10`` compares the float64 values. Runs keep their full scores either way (TREC
  run files are written with round-trip precision).
* Identical ids: a retrieved document whose id equals its query id is dropped before ranking
  (BEIR's ``ignore_identical_ids``; Anserini's ``-removeQuery``). ``ignore_identical_ids=False``
  keeps it.
* Relevance: binary metrics count a document as relevant when its grade >= ``relevance_threshold``
  (default 1, trec_eval's ``relevance_level``; any positive float, for float grades such as click
  or vote scores); DCG and nDCG use the raw grade as gain, whatever the threshold.
* Which queries count: every query of the qrels with at least one relevant judgment. A query in
  the qrels but absent from the run (or left empty by the identical-id rule) scores 0 on every
  metric and stays in the mean (trec_eval ``-c``; pytrec_eval and BEIR average over the run's
  queries only). A query whose judgments are all non-relevant is left out: no metric is defined
  for it (BEIR would report 0 for it where the run has it). Queries of the run that are not in
  the qrels are ignored. The counts of both cases are reported.
* Means: each metric's mean is the correctly rounded sum of its per-query values over their count
  (:mod:`harness.evaluation.mean`), so it does not depend on the order of the queries (the qrels'
  lines): a float sum in file order moved the last digits with the order. trec_eval and BEIR sum in
  their own orders; all agree to ~1e-16.
* MRR@k and R_cap@k follow BEIR's definitions, with the ranking above (BEIR itself sorts ties
  by insertion order).
* Metric names: ``NDCG@10``-style (see ``metrics``). In a list of metrics, a family that takes a
  cutoff named without one (``NDCG_exp``, ``MAP``, ``Success``) stands for one metric per
  ``k_values`` entry; ``AP``, ``R-Prec`` and ``bpref`` take none.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from harness.evaluation.judgments import Judgments, judge
from harness.evaluation.mean import exact_mean
from harness.evaluation.metrics import DEFAULT_FAMILIES, DEFAULT_K, Metric, level_names, parse_metric, takes_cutoff
from harness.evaluation.metrics.dcg import GainOverflow
from harness.evaluation.semantics import Semantics, parse_semantics
from harness.qrels import Qrels
from harness.run import Run


def metrics_for(families: Iterable[str] = DEFAULT_FAMILIES, k_values: Iterable[int] = DEFAULT_K) -> list[Metric]:
    """Every family that takes a cutoff at every cutoff (``NDCG@1 ... MRR@1000``); full names
    (``P@10``) and families without a cutoff (``bpref``, ``AP``) as they are; ``iprec_at_recall``
    without a level at trec_eval's 11 levels (0.00 ... 1.00, whatever ``k_values``). A family that
    takes a cutoff with no ``k_values`` is a ValueError."""
    k_values = list(k_values)
    out: list[Metric] = []
    for family in families:
        if takes_cutoff(family) and not k_values:  # (it was dropped without a word)
            raise ValueError(f"{family} is computed at every cutoff, and no cutoff is given: pass k_values "
                             f"or name it with one (e.g. {family}@10)")
        names = [f"{family}@{k}" for k in k_values] if takes_cutoff(family) else level_names(family) or [family]
        out.extend(parse_metric(name) for name in names)
    return list(dict.fromkeys(out))


# The depth a whole-ranking metric (AP, R-Prec, bpref: no cutoff) is searched to by default: trec_eval
# scores what the run holds, and BEIR's and trec_eval's runs hold 1000 per query (this project's deepest
# default cutoff too).
WHOLE_RANKING_DEPTH = 1000


def default_depth(k_values: Iterable[int], metrics: Iterable[Metric]) -> int:
    """The depth a run is searched to when none is given: the largest cutoff, of ``k_values`` and of
    every metric that has one, and at least :data:`WHOLE_RANKING_DEPTH` when a metric has none (AP,
    R-Prec, bpref). ``--k 1,10 -m Recall@30`` searches 30 deep: cut at 10, the run's Recall@30 would
    be its Recall@10 under the name Recall@30; ``--k 1,10 -m AP`` searches 1000 deep: cut at 10, AP
    would be the AP of a 10-document run."""
    metrics = list(metrics)
    whole = [WHOLE_RANKING_DEPTH] if any(not getattr(m, "k", None) for m in metrics) else []
    return max([*k_values, *(m.k for m in metrics if getattr(m, "k", None)), *whole])


def depth_warning(depth: int, k_values: Iterable[int], metrics: Iterable[Metric]) -> str | None:
    """The warning for a run searched (``--depth``) less deep than :func:`default_depth`: values at
    cutoffs past the depth are computed on the top ``depth`` documents only (``--depth 10 -m
    Recall@100`` reports what is Recall@10 of a deeper run), and so are whole-ranking metrics (AP,
    R-Prec, bpref) below :data:`WHOLE_RANKING_DEPTH`; None when the depth covers them all (a cutoff of
    ``k_values`` that no metric takes, as ``Evaluator(['P@5'], k_values=[1, 10, 100])``, is no value)."""
    metrics = list(metrics)
    deepest = default_depth(k_values, metrics)
    if depth >= deepest:
        return None
    beyond = [m.name for m in metrics if (getattr(m, "k", None) or WHOLE_RANKING_DEPTH) > depth]
    if not beyond:
        return None
    shown = ", ".join(beyond[:4]) + (", ..." if len(beyond) > 4 else "")
    if any(not getattr(m, "k", None) for m in metrics):
        return (f"depth {depth} is below {deepest} (the largest cutoff, or {WHOLE_RANKING_DEPTH} for a metric of "
                f"the whole ranking): {shown} computed on the top {depth} documents only")
    return (f"depth {depth} is below the largest cutoff {deepest}: values at cutoffs past {depth} ({shown}) "
            f"are computed on the top {depth} documents only")


def finite_mean(values: np.ndarray) -> float:
    """The mean of per-query values: :func:`harness.evaluation.mean.exact_mean`, their correctly rounded
    sum over their count (0.0 for none), the same whatever the order of the values (the qrels' line order,
    compare's alignment), and finite for finite values whose sum passes the largest double (DCG_exp)."""
    return exact_mean(np.asarray(values, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Per-query values (arrays aligned with ``query_ids``) and their means."""

    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    n_without_relevant: int = 0
    n_missing_from_run: int = 0
    settings: dict = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def means(self) -> dict[str, float]:
        return {name: finite_mean(v) for name, v in self.values.items()}

    def __repr__(self) -> str:
        """A one-line summary whatever the number of queries (the dataclass's repr printed every per-query
        array: 55,333 characters for SciFact's 300 queries): the counts, the settings and the first
        metrics' means (4 decimals, 4 digits from 1e6 on; :attr:`means` holds them in full), e.g.
        ``EvaluationResult(300 queries, 18 metrics: NDCG@1 0.5533, ..., n_without_relevant=0, ...)``."""
        means = self.means
        shown = ", ".join(f"{name} {value:.4f}" if abs(value) < 1e6 else f"{name} {value:.4g}"  # (DCG_exp: up to 1e308)
                          for name, value in list(means.items())[:6])
        more = f", ... (+{len(means) - 6} more)" if len(means) > 6 else ""
        return (f"EvaluationResult({self.n_queries:,} queries, {len(means)} metrics: {shown}{more}; "
                f"n_without_relevant={self.n_without_relevant}, n_missing_from_run={self.n_missing_from_run}, "
                f"settings={self.settings!r})")

    def per_query(self) -> dict[str, dict[str, float]]:
        names = list(self.values)
        columns = [self.values[n].tolist() for n in names]
        return {q: dict(zip(names, row)) for q, row in zip(self.query_ids.tolist(), zip(*columns))}


class Evaluator:
    """Evaluate runs against qrels with a fixed list of metrics (see the module docstring)."""

    def __init__(
        self,
        metrics: Sequence[str | Metric] | None = None,
        k_values: Iterable[int] = DEFAULT_K,
        relevance_threshold: float = 1.0,
        ignore_identical_ids: bool = True,
        semantics: str | Semantics | None = None,
    ) -> None:
        if isinstance(k_values, (str, bytes)):  # (read one character at a time: "got ['1', '0']")
            raise ValueError(f"k values must be a list of integers >= 1, such as [1, 10], got {k_values!r}")
        k_values = list(k_values)
        if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in k_values):
            raise ValueError(f"k values must be integers >= 1, got {k_values}")
        if isinstance(metrics, (str, Metric)):  # one metric, not a sequence of its characters
            metrics = [metrics]
        if metrics is not None:  # (read once: a generator or map() was used up by the check below, "no metrics")
            metrics = list(metrics)
        for item in metrics or ():
            if not isinstance(item, (str, Metric)):  # (an int reached the name parser: a TypeError from re)
                raise ValueError(f"metrics are names such as 'NDCG@10' or Metric values, got {item!r} "
                                 f"({type(item).__name__}); cutoffs go in k_values")
        if metrics is None:
            self.metrics = metrics_for(DEFAULT_FAMILIES, k_values)
        else:
            self.metrics = list(dict.fromkeys(
                m for item in metrics
                for m in ([item] if isinstance(item, Metric) else metrics_for([item], k_values))))
        if not self.metrics:
            raise ValueError("no metrics to compute")
        number = isinstance(relevance_threshold, numbers.Real)  # (a str "2": numpy's isfinite raised a TypeError)
        try:
            positive = number and math.isfinite(relevance_threshold) and relevance_threshold > 0
        except OverflowError:  # (an int past a double)
            positive = False
        if not positive:
            shown = relevance_threshold if number else repr(relevance_threshold)
            raise ValueError(f"relevance threshold must be a positive number, got {shown}")
        self.relevance_threshold = float(relevance_threshold)
        if not isinstance(ignore_identical_ids, (bool, np.bool_)):  # (bool(): "false" dropped them, None kept them)
            raise TypeError(f"ignore_identical_ids must be True or False, got {ignore_identical_ids!r}")
        self.ignore_identical_ids = bool(ignore_identical_ids)
        self.semantics = parse_semantics(semantics)

    def refuse_no_relevant(self, qrels: Qrels) -> None:
        """ValueError when no judgment reaches the relevance threshold: every query would be left out (no
        metric is defined for a query without a relevant document) and every mean, over no query, would read
        0 (``--relevance-threshold 2`` on SciFact, whose grades are all 1, printed a table of 0.0000 after the
        whole search). The commands check this before they index or evaluate; :meth:`evaluate` itself gives
        the means of no query, 0.0."""
        grades = np.asarray(qrels.grades, dtype=np.float64)
        if len(grades) and not (grades >= self.relevance_threshold).any():
            raise ValueError(f"no judgment reaches the relevance threshold {self.relevance_threshold:g} (the qrels' "
                             f"highest grade is {grades.max():g}): every query would be left out and no metric is "
                             "defined; give a lower threshold")

    def judge(self, run: Run, qrels: Qrels) -> Judgments:
        return judge(run, qrels, self.relevance_threshold, self.ignore_identical_ids, self.semantics)

    def evaluate(self, run: Run, qrels: Qrels) -> EvaluationResult:
        j = self.judge(run, qrels)
        try:
            values = {m.name: m(j) for m in self.metrics}
        except GainOverflow as exc:  # DCG@k past a double: the error names the qrels row of the grade
            raise exc.naming_document(qrels) from None
        return EvaluationResult(
            query_ids=j.query_ids,
            values=values,
            n_without_relevant=j.n_without_relevant,
            n_missing_from_run=j.n_missing_from_run,
            settings={"relevance_threshold": self.relevance_threshold,
                      "ignore_identical_ids": self.ignore_identical_ids,
                      "semantics": self.semantics.name},
        )


def evaluate(run: Run, qrels: Qrels, metrics: Sequence[str | Metric] | None = None,
             k_values: Iterable[int] = DEFAULT_K, **options) -> EvaluationResult:
    """One-shot helper: ``Evaluator(metrics, k_values, **options).evaluate(run, qrels)``."""
    return Evaluator(metrics, k_values, **options).evaluate(run, qrels)
