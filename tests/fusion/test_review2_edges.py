"""Defects found by the second fusion review (ranx as the oracle); each expected value is worked out here.

* ``optimize()`` fused the runs with the hits whose document id is the query id, which ``harness fuse``
  and ``fuse()`` drop: its trials were not the fused runs those give (a depth slot went to the query's
  own id, RRF's ranks shifted), so Python and ``harness fuse --optimize`` scored the same files apart.
* RRF with k near 2^63 - 1 (accepted) added ``k + rank`` in int64, which wrapped: negative scores,
  the ranking reversed.
* Finite scores that overflow in a normalisation (min-max of 1e308 and -1e308) were refused as "an
  input run has an infinite score", and an overflow that only makes ±inf printed numpy warnings.
* ``harness fuse --json`` naming the ``-o`` file replaced the fused run with the JSON (exit 0), and an
  output naming an input file replaced the user's run.
"""

from __future__ import annotations

import math
import warnings

import pytest

from harness.evaluation import Evaluator
from harness.formats.trec import write_run
from harness.fusion import FusionSpec, fuse
from harness.fusion.optimize import optimize
from harness.qrels import Qrels
from harness.run import Run

# The query's own id "q" tops both runs; without it, a and b tie under RRF (1/(k+1) + 1/(k+2) each).
A = Run.from_dict({"q": {"q": 5.0, "a": 4.0, "b": 1.0}})
B = Run.from_dict({"q": {"q": 5.0, "b": 4.0, "a": 1.0}})
QRELS = Qrels.from_dict({"q": {"b": 1}})


def test_optimize_drops_identical_ids_as_fuse_does():
    result = optimize([A, B], QRELS, FusionSpec.create("rrf", depth=1), "NDCG@1", split="dev")
    # q dropped: a and b tie, document id descending puts b (relevant) first at every k: NDCG@1 = 1
    # (before: the cut kept q, which the evaluator then drops: 0 for every trial)
    assert [score for _, score in result.trials] == [1.0] * 10
    assert result.score == 1.0 and result.spec.k == 100  # the last of equal scores, as ranx
    fused = fuse([A, B], "rrf", k=result.spec.k, depth=1)  # the run fuse() / harness fuse give
    assert fused.to_dict() == {"q": {"b": 1 / 101 + 1 / 102}}
    assert Evaluator(["NDCG@1"]).evaluate(fused, QRELS).means["NDCG@1"] == result.score
    # an evaluator that keeps identical ids keeps them in the fusion too: q (not relevant) first
    kept = optimize([A, B], QRELS, FusionSpec.create("rrf", depth=1), "NDCG@1", split="dev",
                    ignore_identical_ids=False)
    assert [score for _, score in kept.trials] == [0.0] * 10


def test_cli_optimize_scores_what_python_optimize_scores(tmp_path, harness_cli):
    paths = []
    for name, run in (("a.trec", A), ("b.trec", B)):
        paths.append(tmp_path / name)
        write_run(run, paths[-1])
    (tmp_path / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\tb\t1\n")
    out = tmp_path / "fused.trec"
    result = harness_cli("fuse", "--run", paths[0], "--run", paths[1], "-o", out, "--depth", "1", "--optimize",
                         "--qrels", tmp_path / "dev.tsv", "--metric", "NDCG@1")
    assert result.returncode == 0, result.stderr
    assert "k=100  NDCG@1 = 1.000000 (10 trials)" in result.stdout
    python = optimize([A, B], QRELS, FusionSpec.create("rrf", depth=1), "NDCG@1", split="dev")
    assert f"k={python.spec.k}  NDCG@1 = {python.score:.6f}" in result.stdout  # (Python said 0.000000)


def test_rrf_k_near_int64_max_stays_positive():
    a = Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    b = Run.from_dict({"q": {"a": 1.0, "c": 0.5}})
    k = 2**63 - 1
    # w / (k + rank) with Python's exact integers (correctly rounded division): a rank 1 in both runs
    expected = {"a": 1 / (k + 1) + 1 / (k + 1), "c": 1 / (k + 2), "b": 1 / (k + 2)}
    assert expected == {"a": 2.0**-62, "c": 2.0**-63, "b": 2.0**-63}
    assert fuse([a, b], "rrf", k=k).to_dict() == {"q": expected}  # before: -2^-62 for a, ranked last
    assert fuse([a, b], "rrf", k=2**62).to_dict() == {"q": {"a": 2 / (2**62 + 1), "c": 1 / (2**62 + 2),
                                                            "b": 1 / (2**62 + 2)}}


def test_finite_scores_that_overflow_are_named_and_warn_nothing():
    huge = Run.from_dict({"q": {"a": 1e308, "b": -1e308}})
    other = Run.from_dict({"q": {"a": 2.0}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # min-max: max - min = 2e308 overflows to inf, (1e308 + 1e308) / inf = inf / inf = NaN
        with pytest.raises(ValueError, match="an input run has an infinite score, or scores so large that they "
                                             "overflow to infinity"):
            fuse([huge, other], "combsum")
        # max norm of all-negative scores divides by the 1e-9 floor: -1e300 / 1e-9 = -inf (ranx's value too),
        # kept; a = 1 + -inf, b = 0 + -inf (other's a: max norm 2 / 2 = 1)
        negative = Run.from_dict({"q": {"a": -1e300, "b": -2e300}})
        assert fuse([negative, other], "combsum", norm="max").to_dict() == {"q": {"b": -math.inf, "a": -math.inf}}
        # optimize normalises once, as fuse does: weights (0, 1) give 0 * -inf = NaN, refused by name
        with pytest.raises(ValueError, match=r"fusion \(wsum, norm max\) gives NaN scores"):
            optimize([negative, other], Qrels.from_dict({"q": {"a": 1}}), FusionSpec.create("wsum", norm="max"),
                     "P@1", split="dev", step=1.0)


def test_cli_refuses_outputs_that_replace_the_fused_run_or_an_input(tmp_path, harness_cli):
    paths = []
    for name, run in (("a.trec", A), ("b.trec", B)):
        paths.append(tmp_path / name)
        write_run(run, paths[-1])
    before = paths[0].read_bytes()
    base = ["fuse", "--run", paths[0], "--run", paths[1]]
    out = tmp_path / "fused.trec"
    result = harness_cli(*base, "-o", out, "--json", out)
    assert result.returncode == 2 and "--json" in result.stderr and "is the --output file" in result.stderr
    assert not out.exists()
    for extra in (["-o", paths[0]], ["-o", out, "--json", paths[0]]):
        result = harness_cli(*base, *extra)
        assert result.returncode == 2 and f"is the input file {paths[0]}" in result.stderr
        assert paths[0].read_bytes() == before and not out.exists()
