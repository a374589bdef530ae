"""Means that do not depend on the order of the queries (harness.evaluation.mean, NUMBERS_VERSION 3).

Before, a metric's mean was numpy's pairwise float sum of the per-query values in the qrels' line order,
so the same qrels with their lines in another order gave another last digit: on SciFact's BM25 run
NDCG@10 read 0.6789094274508312 as shipped and 0.678909427450831 with the qrels shuffled (seed 0), and
compare and the HTML report, which average values aligned in their own order, could disagree with
metrics.json. The mean is now fsum(values) / n, fsum the correctly rounded sum (math.fsum).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from harness.evaluation import Evaluator, evaluate
from harness.evaluation.evaluator import finite_mean
from harness.evaluation.mean import exact_mean
from harness.qrels import Qrels
from harness.run import Run

# P@3 of six queries: 3/3, 0, 0, 1/3, 3/3, 2/3. The exact sum of the six doubles is 3 - 2^-54 (the
# doubles of 1/3 and 2/3 add up to 1 - 2^-54), whose nearest double is 3.0, and the exact mean's nearest
# double is 0.5 (Fraction below); numpy's mean of this order was 0.49999999999999994, of the sorted 0.5.
P3 = [1.0, 0.0, 0.0, 1 / 3, 1.0, 2 / 3]


def test_the_worked_example_is_one_half_in_every_order_of_the_six_values():
    exact = sum(Fraction(v) for v in P3)
    assert exact == 3 - Fraction(1, 2**54) and float(exact) == 3.0 and float(exact / 6) == 0.5
    assert float(np.array(P3).mean()) == 0.49999999999999994  # the old mean of this order
    means = {exact_mean(order) for order in itertools.permutations(P3)}
    assert means == {0.5}
    assert finite_mean(np.array(P3)) == 0.5


def test_evaluator_means_of_the_six_queries_are_one_half_whatever_the_qrels_order():
    # Six queries whose P@3 are the worked example's: q0 3 relevant of 3, q1 and q2 none, q3 one, q4 three,
    # q5 two (relevant documents r*, others n*; scores descend with the position).
    hits = {"q0": "rrr", "q1": "nnn", "q2": "nnn", "q3": "rnn", "q4": "rrr", "q5": "rrn"}
    run = Run.from_dict({q: {f"{q}-{c}{i}": 3.0 - i for i, c in enumerate(s)} for q, s in hits.items()})
    judged = {q: {f"{q}-{c}{i}": int(c == "r") for i, c in enumerate(s)} | {f"{q}-extra": 1} for q, s in hits.items()}
    seen = set()
    for order in itertools.permutations(judged):
        result = Evaluator(["P@3"]).evaluate(run, Qrels.from_dict({q: judged[q] for q in order}))
        assert sorted(result.values["P@3"].tolist()) == sorted(P3)
        seen.add(result.means["P@3"])
    assert seen == {0.5}


@pytest.mark.parametrize("seed", range(5))
def test_scifact_bm25_means_do_not_move_with_the_qrels_line_order(seed, scifact_bm25_run):
    dataset, run = scifact_bm25_run
    shipped = dataset.qrels.to_dict()
    items = list(shipped.items())
    random.Random(seed).shuffle(items)
    before = evaluate(run, Qrels.from_dict(shipped))
    after = evaluate(run, Qrels.from_dict(dict(items)))
    assert after.means == before.means  # to the last bit (before: 6 to 10 of the 30 metrics moved)
    assert before.means["NDCG@10"] == pytest.approx(0.6789, abs=5e-5)  # SciFact BM25's published-scale value
    for name, values in before.values.items():
        exact = Fraction(sum(Fraction(v) for v in values.tolist())) / len(values)
        # two roundings, the sum's (half an ulp of the sum, an n-th of it in the mean: at most one ulp of the
        # mean) and the division's (half an ulp)
        assert abs(Fraction(before.means[name]) - exact) <= Fraction(3, 2) * Fraction(math.ulp(before.means[name])), name


@pytest.fixture(scope="module")
def scifact_bm25_run():
    from harness import registry
    from harness.datasets import load_dataset

    dataset = load_dataset("scifact")
    retriever = registry.create("bm25")
    retriever.index(dataset.corpus)
    return dataset, retriever.search(dataset.queries, 100)


def test_no_values_inf_and_nan_as_a_plain_mean_gives_them():
    assert exact_mean([]) == 0.0
    assert exact_mean([math.inf, 1.0]) == math.inf
    assert math.isnan(exact_mean([math.nan, 1.0]))
    assert math.isnan(exact_mean([math.inf, -math.inf]))


def test_a_sum_past_the_largest_double_gives_the_exact_finite_mean():
    big = math.ldexp(1.0, 1023)  # two of them sum to 2^1024: inf in double
    assert exact_mean([big, big]) == big
    assert exact_mean([big, big, 0.0, 0.0]) == math.ldexp(1.0, 1022)
    assert exact_mean([0.0, big, big, 0.0]) == math.ldexp(1.0, 1022)  # (any order)


def test_leaderboard_average_and_forum_mean_do_not_move_with_the_datasets_order():
    from harness.bench.config import parse_config
    from harness.bench.leaderboard import CellOutcome, build
    from harness.bench.cells import cells
    from harness.datasets.registry import forum_mean

    assert forum_mean(P3) == 0.5 and forum_mean(P3[::-1]) == 0.5  # (sum(P3) / 6 was 0.49999999999999994)
    names = ["scifact", "nfcorpus", "fiqa", "arguana", "scidocs", "trec-covid"]
    values = dict(zip(names, P3))
    averages = set()
    for order in (names, names[::-1], sorted(names)):
        config = parse_config({"name": "s", "metrics": ["P@3"], "datasets": order,
                               "retrievers": [{"type": "bm25", "label": "a"}]})
        outcomes = [CellOutcome(cell, "run", SimpleNamespace(
            metrics={"P@3": values[cell.dataset.label]}, bench={}, n_queries=1, timings={}, dataset={},
            retriever_stats=None, efficiency=None, stages=None, warnings=None)) for cell in cells(config)]
        averages.add(build(config, outcomes)["tables"]["P@3"]["average"]["a"])
    assert averages == {0.5}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_an_array_is_averaged_as_the_list_of_its_values(dtype):
    """exact_mean takes a numpy array's values as float64 in one C pass (no float() per value: 30 metrics
    over 500k queries 0.87 -> 0.46 s): the same mean as the list of its values as Python floats, for
    every dtype a per-query column has, and the correctly rounded one where a float sum is not:
    ten 0.1s sum exactly to 1 + 5.55e-17, whose nearest double is 1.0 (an in-order float sum gives
    0.9999999999999999), so the mean is 0.1."""
    rng = np.random.default_rng(7)
    values = (rng.random(10_001) * 3).astype(dtype)
    assert exact_mean(values) == exact_mean([float(v) for v in values]) == finite_mean(values)
    assert exact_mean(np.full(10, 0.1)) == 0.1 and sum([0.1] * 10) / 10 != 0.1
    assert exact_mean(np.zeros(0, dtype=dtype)) == 0.0
    big = np.array([1.7e308, 1.7e308, 0.0, 0.0])  # (the sum passes the largest double: the scaled retry)
    assert exact_mean(big) == 1.7e308 / 2
