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
