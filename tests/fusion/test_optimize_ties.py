"""``fuse --optimize`` when trials tie: the last of the tied values is chosen (ranx's ``score >= best``),
and the optimisation now says how many tied, in the JSON (``tied``) and as a warning, instead of
presenting the grid's last value as an optimum.

Worked examples (RRF with weights 0.6 and 0.4, ``w / (k + rank)`` summed over the runs, grid k = 10,
20, ..., 100):

* X is rank 1 in run A only, Y rank 17 in both (ranks 2-16 of A and 1-16 of B are documents of one
  run each, below X): X scores ``0.6 / (k + 1)``, Y ``1 / (k + 17)``, so X is above Y iff
  ``0.6 (k + 17) > k + 1``, i.e. ``k < 23``. With X relevant, P@1 is 1 at k = 10 and 20 and 0 at
  k = 30 ... 100: 2 of the 10 trials tie at the best, and k = 20 is chosen.
* set_F is a measure of the retrieved set: every k retrieves the same 33 documents, so all 10 trials
  score the same (P = 1/33, R = 1: F = 2PR / (P + R) = 2/34), and k = 100 is the grid's last value.
"""

from __future__ import annotations

import json

import pytest

from harness.fusion import FusionSpec
from harness.fusion.optimize import optimize
from harness.qrels import Qrels
from harness.run import Run

A = Run.from_dict({"q": {"X": 100.0, **{f"a{i:02d}": 100.0 - i for i in range(2, 17)}, "Y": 1.0}})
B = Run.from_dict({"q": {**{f"b{i:02d}": 100.0 - i for i in range(1, 17)}, "Y": 1.0}})
SPEC = FusionSpec(method="rrf", weights=(0.6, 0.4))


def _qrels():
    return Qrels.from_dict({"q": {"X": 1}})


def test_two_tied_best_trials():
    result = optimize([A, B], _qrels(), SPEC, "P@1", split="dev")
    assert [score for _, score in result.trials] == [1.0, 1.0] + [0.0] * 8
    assert result.chosen == {"k": 20} and result.tied == 2
    assert result.to_dict()["tied"] == 2


def test_every_trial_tied():
    result = optimize([A, B], _qrels(), SPEC, "set_F", split="dev")
    assert [score for _, score in result.trials] == [pytest.approx(2 / 34, abs=1e-15)] * 10
    assert result.chosen == {"k": 100} and result.tied == 10


def _write(path, run):
    path.write_text("".join(f"q Q0 {d} {r} {s} t\n" for r, (d, s) in
                            enumerate(sorted(run.to_dict()["q"].items(), key=lambda x: -x[1]), 1)))
    return path


def test_the_cli_warns_of_ties(harness_cli, tmp_path):
    a, b = _write(tmp_path / "a.trec", A), _write(tmp_path / "b.trec", B)
    (tmp_path / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\tX\t1\n")
    out = tmp_path / "fused.trec"
    proc = harness_cli("fuse", "--run", a, "--run", b, "-o", out, "--method", "rrf", "--optimize",
                       "--weights", "0.6,0.4", "--qrels", tmp_path / "dev.tsv", "--metric", "set_F")
    assert proc.returncode == 0, proc.stderr
    assert ("warning: every one of the 10 trials scored set_F = 0.05882352941176471: set_F does not tell them "
            "apart, and k=100 is the last of them in grid order (ranx's rule), not a better value") in proc.stderr
    assert json.loads((tmp_path / "fused.trec.json").read_text())["optimization"]["tied"] == 10
    proc = harness_cli("fuse", "--run", a, "--run", b, "-o", out, "--method", "rrf", "--optimize",
                       "--weights", "0.6,0.4", "--qrels", tmp_path / "dev.tsv", "--metric", "P@1")
    assert "warning: 2 of the 10 trials scored P@1 = 1.0: P@1 does not tell them apart, and k=20 is" in proc.stderr
    assert "k=20  P@1 = 1.000000 (10 trials)" in proc.stdout


# Float ties (review): the trials' scores are float means over the queries, so trials whose per-query
# values are the same numbers on other queries tie in exact arithmetic but differ in the last bit, by the
# order of the sum: RR 1, 1/6, 1/2 has the mean 0.5555555555555556, RR 1/2, 1/6, 1 the mean
# 0.5555555555555555 (both 5/9). Worked example, RRF with weights 0.95 and 0.05, grid k = 10, ..., 100:
# in q1 and q3, X is rank 1 of run A only, a rank 2 of A only, Y rank 3 of both runs (b1, b2 ranks 1-2 of
# B), so Y scores 1/(k + 3), X 0.95/(k + 1), a 0.95/(k + 2): Y is above a iff 0.05 k > 0.85 (k > 17) and
# above X iff 0.05 k > 1.85 (k > 37). q1 judges X relevant: RR 1 for k <= 30, 1/2 for k >= 40; q3 judges
# Y: RR 1/3 at k = 10, 1/2 at k = 20, 30, 1 for k >= 40; q2's relevant document is rank 6 of both runs
# (RR 1/6 at every k). So k = 10 scores (1 + 1/6 + 1/3) / 3 = 1/2 and each of k = 20 ... 100 scores 5/9:
# 9 trials tie and k = 100 is chosen (ranx's rule), whatever the order of the qrels' queries. Before, the
# last bit of the means chose: k = 30 (tied 2) with the queries in the order q1, q2, q3 and k = 100
# (tied 7) in the order q3, q2, q1.

def _float_tie_runs():
    def crossing(p):
        return ({f"{p}X": 3.0, f"{p}a": 2.0, f"{p}Y": 1.0}, {f"{p}b1": 3.0, f"{p}b2": 2.0, f"{p}Y": 1.0})

    (a1, b1), (a3, b3) = crossing("x"), crossing("y")
    middle = {f"m{i}": 10.0 - i for i in range(1, 7)}
    return (Run.from_dict({"q1": a1, "q2": middle, "q3": a3}),
            Run.from_dict({"q1": b1, "q2": dict(middle), "q3": b3}))


@pytest.mark.parametrize("order", [("q1", "q2", "q3"), ("q3", "q2", "q1")])
def test_scores_equal_but_for_the_rounding_of_the_mean_tie(order):
    from fractions import Fraction

    judged = {"q1": {"xX": 1}, "q2": {"m6": 1}, "q3": {"yY": 1}}
    result = optimize(list(_float_tie_runs()), Qrels.from_dict({q: judged[q] for q in order}),
                      FusionSpec(method="rrf", weights=(0.95, 0.05)), "RR", split="dev")
    assert [score for _, score in result.trials] == [0.5] + [pytest.approx(5 / 9, abs=1e-15)] * 9
    assert Fraction(result.score).limit_denominator(100) == Fraction(5, 9)
    assert result.chosen == {"k": 100} and result.tied == 9 and result.to_dict()["tied"] == 9


def test_the_cli_reads_float_ties_alike_in_any_query_order(harness_cli, tmp_path):
    a, b = _float_tie_runs()
    paths = [_write_all(tmp_path / "a.trec", a), _write_all(tmp_path / "b.trec", b)]
    chosen = []
    for order in (("q1", "q2", "q3"), ("q3", "q2", "q1")):
        judged = {"q1": "xX", "q2": "m6", "q3": "yY"}
        qrels = tmp_path / "dev.tsv"
        qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{judged[q]}\t1\n" for q in order))
        out = tmp_path / "fused.trec"
        proc = harness_cli("fuse", "--run", paths[0], "--run", paths[1], "-o", out, "--method", "rrf", "--optimize",
                           "--weights", "0.95,0.05", "--qrels", qrels, "--metric", "RR")
        assert proc.returncode == 0, proc.stderr
        assert "warning: 9 of the 10 trials scored RR = 0.555555555555555" in proc.stderr
        optimization = json.loads((tmp_path / "fused.trec.json").read_text())["optimization"]
        chosen.append((optimization["chosen"], optimization["tied"]))
    assert chosen == [({"k": 100}, 9)] * 2


def _write_all(path, run):
    path.write_text("".join(f"{q} Q0 {d} {r} {s} t\n" for q, docs in run.to_dict().items() for r, (d, s) in
                            enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)))
    return path
