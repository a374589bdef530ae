"""The fused run is cut at ``--depth`` in the evaluator's order, as every other depth cut of the
harness (harness.evaluation.semantics.top_depth). Worked example: CombSUM without normalisation of
run 1 {a 0.5, b 0.5} and run 2 {a 0.50000001, b 0.5} gives a 1.00000001 and b 1.0, equal in float32.
trec_eval 9 (pytrec_eval) ties them and ranks b first (document id descending), so at depth 1 the
fused file must hold b: with only b relevant, P@1 is 1. The former double-order cut kept a: P@1 0."""

from __future__ import annotations

import json

import pytest

from harness.evaluation import Evaluator
from harness.formats.trec import read_run, write_run
from harness.fusion import FusionSpec, fuse_runs
from harness.fusion.optimize import optimize
from harness.qrels import Qrels
from harness.run import Run

RUNS = [Run.from_dict({"q": {"a": 0.5, "b": 0.5}}), Run.from_dict({"q": {"a": 0.50000001, "b": 0.5}})]
QRELS = Qrels.from_dict({"q": {"b": 1}})
SPEC = FusionSpec.create("combsum", "none", None, None, 1)


def test_trec_eval_9_keeps_the_document_the_evaluator_ranks_first():
    fused = fuse_runs(RUNS, SPEC, "trec_eval-9")
    assert fused.to_dict() == {"q": {"b": 1.0}}
    assert Evaluator(["P@1"]).evaluate(fused, QRELS).means["P@1"] == 1.0


def test_trec_eval_10_and_no_semantics_cut_in_double_order():
    for semantics in ("trec_eval-10", None):
        assert fuse_runs(RUNS, SPEC, semantics).to_dict() == {"q": {"a": 1.00000001}}


def test_optimisation_trials_cut_in_the_evaluators_order():
    spec = FusionSpec.create("wsum", "none", None, [0.5, 0.5], 1)
    result = optimize(RUNS, QRELS, spec, "P@1", split="dev", step=0.5, semantics="trec_eval-9")
    # weights (0.5, 0.5): a 0.500000005, b 0.5, equal in float32: b kept, P@1 = 1 for every trial
    assert [score for _, score in result.trials] == [1.0, 1.0, 1.0]


def test_cli_fuse_cuts_in_the_semantics_order_and_records_it(tmp_path, harness_cli):
    paths = []
    for i, run in enumerate(RUNS):
        paths.append(tmp_path / f"r{i}.trec")
        write_run(run, paths[-1])
    out = tmp_path / "fused.trec"
    for semantics, kept in (("trec_eval-9", "b"), ("trec_eval-10", "a")):
        result = harness_cli("fuse", "--run", paths[0], "--run", paths[1], "-o", out, "--method", "combsum",
                             "--norm", "none", "--depth", "1", "--semantics", semantics, "--json", tmp_path / "f.json")
        assert result.returncode == 0, result.stderr
        assert list(read_run(out).to_dict()["q"]) == [kept]
        assert json.loads((tmp_path / "f.json").read_text())["semantics"] == semantics
    bad = harness_cli("fuse", "--run", paths[0], "--run", paths[1], "-o", out, "--semantics", "trec_eval-8")
    assert bad.returncode == 2 and "unknown semantics 'trec_eval-8'" in bad.stderr
