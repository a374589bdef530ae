"""exact_mean's contract (harness/evaluation/mean.py): the same mean in any order of the values; an infinite value
gives inf, NaN NaN, inf with -inf NaN; finite values whose sum passes the largest double a finite mean.

Where both met (finite values near 2^1023 whose sum overflows, and a non-finite value), math.fsum raises
OverflowError at the overflow when it comes before the non-finite value, and the scaled retry, scaled by the
largest magnitude (inf: a scale of 1), raised it again: a traceback in one order, inf or NaN in another
([big, big, nan] gave nan, [nan, big, big] raised). Now the non-finite values decide, as without an overflow."""

from __future__ import annotations

import itertools
import math

import pytest

from harness.evaluation.evaluator import finite_mean
from harness.evaluation.mean import exact_mean

BIG = 1.7e308  # two sum past the largest double (1.797e308)


@pytest.mark.parametrize("special, expected", [([math.inf], math.inf), ([-math.inf], -math.inf),
                                                ([math.nan], math.nan), ([math.inf, -math.inf], math.nan),
                                                ([math.inf, math.inf], math.inf)])
def test_non_finite_values_decide_the_mean_in_every_order_also_past_the_largest_double(special, expected):
    import numpy as np

    for finite in ([1.0, 2.0], [BIG, BIG], [BIG, BIG, -BIG, 0.5]):
        for order in itertools.permutations([*finite, *special]):
            for mean in (exact_mean(order), finite_mean(np.asarray(order))):
                assert mean == expected or (math.isnan(expected) and math.isnan(mean)), (order, mean)


def test_finite_values_past_the_largest_double_still_give_the_exact_mean():
    assert exact_mean([BIG, BIG, 0.0, 0.0]) == BIG / 2
    assert exact_mean([BIG, BIG, -BIG]) == BIG / 3
