"""Grid search of fusion parameters on training / dev qrels, as ranx's ``optimize_fusion``.

* ``rrf``: ``k`` over ``k_values`` (default ranx's grid 10, 20, ..., 100).
* ``wsum``: the weights, every vector of multiples of ``step`` (default 0.1) that sums to 1, in
  ``itertools.product`` order (first run's weight slowest). ranx filters ``product`` with a float
  test ``sum(weights) == 1.0``; this grid is built from integers, so it is the exact set (for three
  or more runs, ranx's float sum can drop a few vectors such as ``(0.2, 0.7, 0.1)``).

Each trial fuses the runs (aligned and normalised once), cuts to the spec's depth and is scored
with the project's evaluator on one metric (e.g. ``NDCG@10``). The best score wins; among equal
scores the later trial in grid order wins, as in ranx (``score >= best``), scores equal up to the
rounding of their means counting as equal (:func:`best_trials`). When the evaluator
ignores hits whose document id is the query id (its default), they are dropped from the runs
first, as ``harness fuse`` and :func:`~harness.fusion.fuse` drop them: each trial is the fused run
those give (kept, they shifted RRF's ranks and took depth slots of documents the evaluator counts).

Tuning on the test split is refused unless ``allow_test_split=True``: parameters chosen on the
queries they are then evaluated on make the reported score optimistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Iterator, Sequence

import numpy as np

from harness.errors import HarnessError
from harness.evaluation import Evaluator
from harness.evaluation.metrics import evaluated_names, parse_metric, takes_cutoff
from harness.fusion.fuse import align, check_runs, check_spec, contributions, fuse_aligned
from harness.fusion.spec import FusionSpec
from harness.qrels import Qrels
from harness.run import Run

RRF_K_GRID = tuple(range(10, 101, 10))
WEIGHT_STEP = 0.1
OPTIMIZABLE = {"rrf": "k", "wsum": "weights"}

# Slack of "equal scores", relative to the best: a score is a float mean over the queries, and trials
# whose per-query values are the same numbers on other queries (equal in exact arithmetic) differ in its
# last bits by the order of the sum (RR 1, 1/6, 1/2 on three queries: 0.5555555555555556; 1/2, 1/6, 1:
# 0.5555555555555555), so the qrels' query order, not the fusion, chose among them.
_ROUNDING = 1e-12
# The rule above, named in a pipeline fuse stage's cache key (harness.pipeline.run): a stage optimised under
# the exact `score >= best` of before (the trial chosen by the last bits of near-equal means) is computed again
TIE_RULE = "the last trial within 1e-12 * max(1, |best|) of the best"


def best_trials(scores: Sequence[float]) -> list[int]:
    """The indices of the trials that tie at the best score, in grid order: those with
    ``score >= best - 1e-12 * max(1, |best|)`` (a few ulps of rounding in a mean never breaks a tie);
    the last of them is chosen (ranx's ``score >= best``)."""
    numbers = [score for score in scores if not math.isnan(score)]
    if not numbers:
        return list(range(len(scores)))
    best = max(numbers)
    floor = best - _ROUNDING * max(1.0, abs(best)) if math.isfinite(best) else best
    return [i for i, score in enumerate(scores) if score >= floor]


def tie_warning(optimization: dict) -> str | None:
    """The warning for an optimisation (:meth:`Optimization.to_dict`, as a JSON sidecar or a pipeline
    stage records it) whose best score several trials share: the chosen value is then only the last of
    them in grid order, not a better one; None when one trial alone scored best."""
    tied, trials = optimization.get("tied") or 0, optimization.get("trials") or []
    if tied <= 1:
        return None
    chosen = ", ".join(f"{key}={value}" for key, value in (optimization.get("chosen") or {}).items())
    which = "every one" if tied == len(trials) else f"{tied}"
    metric = optimization.get("metric")
    return (f"{which} of the {len(trials)} trials scored {metric} = {optimization.get('score')!r}: {metric} "
            f"does not tell them apart, and {chosen} is the last of them in grid order (ranx's rule), not a "
            "better value")


def weight_grid(n_runs: int, step: float = WEIGHT_STEP) -> list[tuple[float, ...]]:
    """Every weight vector of ``n_runs`` multiples of ``step`` summing to 1, in product order."""
    parts = Fraction(1) / Fraction(str(step)) if 0 < step <= 1 else Fraction(1, 2)
    if parts.denominator != 1:
        raise ValueError(f"weight step must divide 1 (e.g. 0.1, 0.05, 0.25), got {step}")
    m = int(parts)

    def compositions(n: int, total: int) -> Iterator[tuple[int, ...]]:
        if n == 1:
            yield (total,)
            return
        for first in range(total + 1):
            for rest in compositions(n - 1, total - first):
                yield (first, *rest)

    return [tuple(i / m for i in combo) for combo in compositions(n_runs, m)]


@dataclass(frozen=True)
class Optimization:
    """The chosen spec, its score, and every trial (parameters, score) in grid order."""

    spec: FusionSpec
    metric: str
    score: float
    split: str | None
    parameter: str
    trials: tuple[tuple[object, float], ...]

    @property
    def tied(self) -> int:
        """How many trials tie at the best score, up to the rounding of a mean (:func:`best_trials`; the
        chosen one among them: the last in grid order). Every trial tied: the metric could not tell the
        values apart (e.g. a measure of the retrieved set, ``set_F``, under rrf with no depth cut), and the
        choice is the grid's last value."""
        return len(best_trials([score for _, score in self.trials]))

    @property
    def chosen(self) -> dict:
        value = getattr(self.spec, self.parameter)
        return {self.parameter: list(value) if isinstance(value, tuple) else value}

    def to_dict(self) -> dict:
        return {"metric": self.metric, "score": self.score, "split": self.split, "chosen": self.chosen,
                "tied": self.tied, "spec": self.spec.to_dict(),
                "trials": [{self.parameter: list(v) if isinstance(v, tuple) else v, "score": s}
                           for v, s in self.trials]}


def check_split(split: str | None, allow_test_split: bool) -> None:
    """Refuse to tune on a split named ``test`` unless asked explicitly."""
    if split is not None and split.strip().lower() == "test" and not allow_test_split:
        raise HarnessError("refusing to optimise fusion on the test split (the chosen values would be tuned "
                           "on the queries they are evaluated on); use a train/dev split, or allow it explicitly "
                           "(--allow-test-split; in Python allow_test_split=True)")


def tuned_parameter(spec: FusionSpec) -> str:
    """The parameter an optimisation of ``spec`` tunes (``k`` or ``weights``); ValueError when none."""
    parameter = OPTIMIZABLE.get(spec.method)
    if parameter is None:
        raise ValueError(f"{spec.method} has no parameter to optimise (optimisation tunes rrf's k or wsum's weights)")
    return parameter


def single_metric_evaluator(metric: str, **options) -> Evaluator:
    """An evaluator of exactly one metric (``NDCG@10``, ``AP``, ...), the name read as one name, as
    ``harness compare -m`` and ``check -m`` read it (``map`` is ``AP``, ``mrr`` is ``RR``); not a count
    (``num_ret``: a higher value is no better fusion)."""
    try:
        names = evaluated_names(metric)
    except ValueError as exc:
        if not takes_cutoff(metric):
            raise
        raise ValueError(f"optimisation needs one metric with its cutoff (e.g. NDCG@10), got {metric!r}") from exc
    if len(names) > 1:  # (iprec_at_recall: 11 levels, not cutoffs)
        raise ValueError(f"optimisation needs one metric with its level (e.g. {names[len(names) // 2]}), "
                         f"got {metric!r}")
    parsed = parse_metric(names[0])
    if parsed.counts is not None:
        raise ValueError(f"optimisation needs a quality measure: {parsed.name} is {parsed.counts}, where more is not "
                         f"better (e.g. NDCG@10 or AP)")
    return Evaluator([parsed], **options)


def optimize(runs: Sequence[Run], qrels: Qrels, spec: FusionSpec, metric: str = "NDCG@10",
             split: str | None = None, allow_test_split: bool = False, step: float = WEIGHT_STEP,
             k_values: Iterable[int] = RRF_K_GRID, **evaluator_options) -> Optimization:
    """Grid-search ``spec``'s free parameter (RRF's ``k`` or wsum's weights) on ``qrels``.

    ``split`` names the qrels' split (refused when ``test`` unless ``allow_test_split``);
    ``evaluator_options`` go to :class:`~harness.evaluation.Evaluator` (relevance_threshold,
    ignore_identical_ids: also whether such hits are dropped from ``runs`` before fusing, semantics:
    also the order each trial's depth cut follows).
    """
    call = "optimize(runs, qrels, spec, ...)"
    runs, spec = check_runs(runs, call), check_spec(spec, call)
    if not isinstance(qrels, Qrels):
        raise TypeError(f"{call} takes a harness Qrels, got {type(qrels).__name__}: build it from BEIR's dict with "
                        "Qrels.from_dict(qrels), or read a file with harness.formats.trec.read_qrels(path)")
    check_split(split, allow_test_split)
    parameter = tuned_parameter(spec)
    if len(runs) < 2:
        raise ValueError(f"fusion needs at least two runs, got {len(runs)}")
    evaluator = single_metric_evaluator(metric, **evaluator_options)
    name = evaluator.metrics[0].name
    grid: list = [int(k) for k in k_values] if parameter == "k" else weight_grid(len(runs), step)
    if not grid:
        raise ValueError("the optimisation grid is empty")
    evaluator.refuse_no_relevant(qrels)  # (every trial would score 0 over no query, a tie of them all)
    if evaluator.ignore_identical_ids:  # as harness fuse / fuse(): else they shift RRF's ranks and take
        runs = [run.without_identical_ids() for run in runs]  # depth slots of documents the evaluator counts
    aligned = align(runs)
    with np.errstate(invalid="ignore", over="ignore"):  # (NaN from infinite scores: fuse_aligned names it)
        parts = contributions(aligned, spec)  # normalised once; only k or the weights change per trial
    trials = []
    for value in grid:
        trial = spec.replace(**{parameter: value})
        fused = fuse_aligned(aligned, trial, trial.weights_for(len(runs)), parts, semantics=evaluator.semantics)
        trials.append((value, evaluator.evaluate(fused, qrels).means[name]))
    value, score = trials[best_trials([s for _, s in trials])[-1]]
    return Optimization(spec=spec.replace(**{parameter: value}), metric=name, score=score, split=split,
                        parameter=parameter, trials=tuple(trials))
