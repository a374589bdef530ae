"""compare, check and report are functions of the per-query values, not of the order of the input lines.

The randomization test and the bootstraps draw signs and resampled queries by position; the queries were
aligned in the first system's order (its qrels' line order, or its metrics.json's), so the same
judgments with their lines re-sorted gave another Monte Carlo p-value and interval, and a gate near alpha
flipped. The queries are now aligned in query-id order (trec_eval's order: strcmp), so the means compare
and check compute over them are sums taken in one order too.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from harness.compare import Settings, align, compare, load_system
from tests.compare.helpers import write_result

N = 60  # queries q0 ... q59


def _p10(seed: int = 124) -> tuple[np.ndarray, np.ndarray]:
    """P@10-like values (multiples of 0.1) of a baseline and a current system that differ on 36 of 60
    queries: at seed 124 the means are 0.575 and 0.545 (-0.03, beyond the default tolerance) and the exact
    randomization p is 0.0531, so a Monte Carlo estimate falls on either side of alpha = 0.05."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 11, N) / 10
    change = rng.choice([-0.1, 0, 0, 0, 0.1, -0.2, 0.2], N, p=[0.3, 0.15, 0.15, 0.15, 0.1, 0.08, 0.07])
    return base, np.clip(base + change, 0, 1).round(1)


def _exact_p(base: np.ndarray, cur: np.ndarray) -> float:
    """The exact two-sided randomization p-value (the share of the 2^m sign flips of the m non-zero
    differences whose |sum| reaches the observed one), by counting the sums of the flips exactly: the
    differences are whole tenths, so the counts of each sum are a convolution of integers (no Monte Carlo)."""
    d = [round(x * 10) for x in (cur - base).tolist() if round(x * 10)]
    counts = {0: 1}
    for x in d:
        nxt: dict[int, int] = {}
        for s, c in counts.items():
            for t in (s + x, s - x):
                nxt[t] = nxt.get(t, 0) + c
        counts = nxt
    observed = abs(sum(d))
    return float(Fraction(sum(c for s, c in counts.items() if abs(s) >= observed), 2 ** len(d)))


def _results(tmp_path, order: list[int], tag: str):
    """The baseline and current result folders with their per-query values written in ``order``."""
    base, cur = _p10()
    folders = []
    for name, column in (("baseline", base), ("current", cur)):
        per_query = {f"q{i}": {"P@10": float(column[i])} for i in order}
        folders.append(write_result(tmp_path / tag / name, per_query))
    return folders


def test_a_check_near_alpha_gives_one_verdict_whatever_the_order_of_the_files(harness_cli, tmp_path):
    """Old code: the files in the order q0 ... q59 gave p = 0.05399 (NOISE, exit 0), the same values written
    in query-id order (q0, q1, q10, q11, ...) p = 0.04800 (REGRESSED, exit 1). Now every order gives the
    same p and verdict (that of query-id order: p = 0.0480); the p is the Monte Carlo estimate (10,000 sign
    vectors, seed 0) of the exact p computed here by counting every sign flip (0.0531), within 4 standard
    errors (0.0022 each)."""
    orders = {"numbered": list(range(N)), "sorted": sorted(range(N), key=lambda i: f"q{i}"),
              "reversed": list(range(N))[::-1], "shuffled": random.Random(7).sample(range(N), N)}
    outcomes = {}
    for tag, order in orders.items():
        base, cur = _results(tmp_path, order, tag)
        done = harness_cli("check", "--baseline", base, "--current", cur, "-m", "P@10", "--show", "0",
                           "--json", tmp_path / f"{tag}.json")
        (check,) = json.loads((tmp_path / f"{tag}.json").read_text())["checks"]
        outcomes[tag] = (done.returncode, check["verdict"], check["p_value"], check["baseline"], check["current"])
    assert len(set(outcomes.values())) == 1, outcomes
    code, verdict, p, before, after = outcomes["numbered"]
    base, cur = _p10()
    exact = _exact_p(base, cur)
    assert abs(p - exact) < 4 * (exact * (1 - exact) / 10_000) ** 0.5, (p, exact)
    # the means: the sums over 60 (34.5 / 60 and 32.7 / 60), in query-id order (the same bits for every order)
    assert before == pytest.approx(float(Fraction(round(base.sum() * 10), 10 * N)), rel=1e-15)
    assert after == pytest.approx(float(Fraction(round(cur.sum() * 10), 10 * N)), rel=1e-15)
    assert (code, verdict) == ((1, "REGRESSED") if p < 0.05 else (0, "NOISE"))


def test_compare_and_report_give_the_same_numbers_whatever_the_order_of_the_files(tmp_path):
    """harness compare's p-values and bootstrap interval, and the report's cell intervals, groups and
    row against the baseline, are the same for the per-query values written in any order (and with
    either system first in the alignment)."""
    from harness.reports.html.model import build_report

    settings = Settings(permutations=2000, resamples=2000)
    seen_compare, seen_report = set(), set()
    for tag, order in {"numbered": list(range(N)), "reversed": list(range(N))[::-1],
                       "shuffled": random.Random(3).sample(range(N), N)}.items():
        base, cur = (load_system(str(f)) for f in _results(tmp_path, order, tag))
        for first, second in ((base, cur), (cur, base)):
            c = compare(align([first, second], ["P@10"]), baseline="baseline", settings=settings)
            s = c.cells[("current", "P@10")].stats
            seen_compare.add((s.p_t, s.p_randomization, s.ci_low, s.ci_high, s.difference, s.mean, s.baseline_mean))
        report = build_report({"toy": [base, cur]}, ["P@10"], settings=settings)
        (section,) = report.datasets
        seen_report.add(json.dumps([section.cells, section.versus], sort_keys=True))
    assert len(seen_compare) == 1, seen_compare
    assert len(seen_report) == 1


def _trec_files(tmp_path):
    """Qrels and two runs of 40 queries (3 relevant documents each, at random ranks of 20): the lines in
    the files' own order and shuffled."""
    rng = random.Random(11)
    qrels, runs = [], {"a": [], "b": []}
    for q in range(1, 41):
        relevant = [f"d{q}_{j}" for j in range(3)]
        qrels += [f"{q} 0 {d} {rng.choice([1, 2])}" for d in relevant]
        for name in runs:
            docs = relevant + [f"n{q}_{j}" for j in range(17)]
            rng.shuffle(docs)
            runs[name] += [f"{q} Q0 {d} {r + 1} {20 - r} {name}" for r, d in enumerate(docs)]
    files = {}
    for tag, shuffle in (("file", False), ("shuffled", True)):
        for name, lines in (("qrels", qrels), *runs.items()):
            lines = list(lines)
            if shuffle:
                random.Random(5).shuffle(lines)
            path = tmp_path / tag / f"{name}.txt"
            path.parent.mkdir(exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
            files[(tag, name)] = path
    return files


def test_compare_of_run_files_does_not_depend_on_the_order_of_the_qrels_and_run_lines(harness_cli, tmp_path):
    """harness compare RUN RUN --qrels Q: the same qrels and runs with their lines shuffled (qrels in
    another query order: the evaluator's queries come in the qrels' first-seen order) give the same JSON:
    means, p-values of both tests, intervals, wins/ties/losses (old code: other p-values and intervals)."""
    files = _trec_files(tmp_path)
    documents = []
    for tag in ("file", "shuffled"):
        out = tmp_path / f"{tag}.json"
        done = harness_cli("compare", f"a={files[(tag, 'a')]}", f"b={files[(tag, 'b')]}", "--qrels",
                           files[(tag, "qrels")], "-m", "NDCG@10,AP,P@10", "--json", out)
        assert done.returncode == 0, done.stderr
        document = json.loads(out.read_text())
        documents.append((document["systems"][0]["means"], document["systems"][1]["means"],
                          [{k: v for k, v in c.items() if k != "source"} for c in document["comparisons"]]))
    assert documents[0] == documents[1]
    assert not all(c["randomization_exact"] for c in documents[0][2])  # (Monte Carlo p-values among them)


def test_exact_p_oracle_agrees_with_a_brute_force_enumeration():
    """The counting oracle above against all 2^12 sign flips of 12 differences."""
    base = np.zeros(12)
    cur = np.array([0.1, -0.2, 0.3, 0.1, 0.1, -0.1, 0.2, 0.4, -0.3, 0.1, 0.2, 0.1])
    d = np.round(cur * 10)
    observed = abs(d.sum())
    brute = sum(abs(np.dot(signs, d)) >= observed for signs in product((1, -1), repeat=12)) / 2 ** 12
    assert _exact_p(base, cur) == brute
