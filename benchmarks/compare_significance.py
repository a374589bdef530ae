"""Significance tests of harness.compare against scipy, side by side.

    PYTHONPATH=. python benchmarks/compare_significance.py [--queries 300 5000] [--permutations 10000]

For each number of queries: per-query differences drawn like nDCG@10 differences of two similar
systems (most queries unchanged). Measures Fisher's randomization test (harness, numpy sign blocks)
against scipy.stats.permutation_test (paired, permutation_type="samples"), the paired bootstrap
interval against scipy.stats.bootstrap (percentile), and the paired t-test against
scipy.stats.ttest_rel; prints both times, the ratio, and both results.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_of(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, nargs="+", default=[300, 5000])
    parser.add_argument("--permutations", type=int, default=10_000)
    args = parser.parse_args()

    from scipy import stats

    from harness.compare.significance import paired_bootstrap_ci, paired_t_test, randomization_test

    print(f"{'test':<14} {'queries':>7} {'harness s':>10} {'scipy s':>9} {'ratio':>6}  harness result | scipy result")
    for n in args.queries:
        rng = np.random.default_rng(n)
        a = rng.random(n)
        changed = rng.random(n) < 0.25
        b = np.clip(a + changed * rng.normal(0.01, 0.3, n), 0, 1)
        N = args.permutations

        t_h, mine = best_of(lambda: randomization_test(a, b, permutations=N, seed=1))
        t_s, ref = best_of(lambda: stats.permutation_test(
            (b, a), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples", n_resamples=N,
            vectorized=True, random_state=1))
        print(f"{'randomization':<14} {n:>7} {t_h:>10.4f} {t_s:>9.4f} {t_s / t_h:>6.1f}  p={mine.p_value:.4f} | "
              f"p={ref.pvalue:.4f}")

        t_h, mine = best_of(lambda: paired_bootstrap_ci(a, b, resamples=N, seed=1))
        t_s, ref = best_of(lambda: stats.bootstrap((b - a,), np.mean, n_resamples=N, method="percentile",
                                                   vectorized=True, random_state=1))
        ci = ref.confidence_interval
        print(f"{'bootstrap':<14} {n:>7} {t_h:>10.4f} {t_s:>9.4f} {t_s / t_h:>6.1f}  "
              f"[{mine.low:+.4f}, {mine.high:+.4f}] | [{ci.low:+.4f}, {ci.high:+.4f}]")

        t_h, mine = best_of(lambda: paired_t_test(a, b), repeat=20)
        t_s, ref = best_of(lambda: stats.ttest_rel(b, a), repeat=20)
        print(f"{'t-test':<14} {n:>7} {t_h:>10.6f} {t_s:>9.6f} {t_s / t_h:>6.1f}  p={mine.p_value:.6g} | "
              f"p={ref.pvalue:.6g}")


if __name__ == "__main__":
    main()
