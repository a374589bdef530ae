"""harness_shortest_repr (harness/native/shortest.cpp) against Python's repr on many random floats.

    PYTHONPATH=. python benchmarks/shortest_repr_check.py [--values 100000000] [--seed 1]

The run writer formats scores with harness_shortest_repr (on threads) instead of Python's repr; the
file must stay byte for byte what ``repr`` gives. Batches of 1M values, half widened float32 bit
patterns (what retrievers' scores are), half float64 bit patterns of both signs (runs read from
files, fusion), are formatted both ways and compared; prints the count of values checked and of
differences (the first ones shown). Minutes: run it by hand.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.formats import native


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--values", type=int, default=100_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if native._built is None:
        raise SystemExit("the compiled run writer is not built")
    rng = np.random.default_rng(args.seed)
    checked = bad = 0
    start = time.perf_counter()
    batch = 1_000_000
    while checked < args.values:
        n = min(batch, args.values - checked) // 2
        with np.errstate(invalid="ignore"):
            f32 = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
            f64 = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64) * rng.choice([-1.0, 1.0], n)
        values = np.concatenate([f32, f64])
        got = native._built.format_scores(values, 2).split(b"\n")[:-1]
        expected = [repr(v).encode() for v in values.tolist()]
        if got != expected:
            for v, g, e in zip(values.tolist(), got, expected):
                if g != e:
                    bad += 1
                    if bad <= 10:
                        print(f"differs: {e.decode()} formatted as {g.decode()}")
        checked += len(values)
    print(f"{checked:,} values checked, {bad} differences, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
