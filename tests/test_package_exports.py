"""The names a script starts from are importable from ``harness`` itself (ranx's ``from ranx import Qrels,
Run, evaluate``), imported on first use: ``import harness`` alone still imports no numpy (every ``harness``
command imports the package first; its start-up must not grow)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

import harness


def test_import_harness_alone_imports_nothing_heavy():
    code = "import sys, harness; print(sorted(m for m in ('numpy', 'pyarrow', 'harness.run') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_exports_are_the_modules_own_objects():
    from harness import Dataset, EvaluationResult, Evaluator, Qrels, Run, evaluate, load_dataset, run_experiment
    from harness.datasets import Dataset as D, load_dataset as L
    from harness.evaluation import EvaluationResult as ER, Evaluator as E, evaluate as ev
    from harness.experiment import run_experiment as re
    from harness.qrels import Qrels as Q
    from harness.run import Run as R

    assert (Dataset, EvaluationResult, Evaluator, Qrels, Run, evaluate, load_dataset, run_experiment) == \
        (D, ER, E, Q, R, ev, L, re)
    assert set(harness.__all__) >= {"Run", "Qrels", "evaluate", "load_dataset"} and "Run" in dir(harness)


def test_worked_example_from_the_docstring():
    # q1 ranks a (2.0, not judged) then b (1.0, relevant): NDCG@10 = (1/log2(3)) / 1, MRR@10 = 1/2 (trec_eval)
    result = harness.evaluate(harness.Run.from_dict({"q1": {"a": 2.0, "b": 1.0}}),
                              harness.Qrels.from_dict({"q1": {"b": 1}}), ["NDCG@10", "MRR@10"])
    assert result.means == {"NDCG@10": pytest.approx(1 / math.log2(3), abs=1e-15), "MRR@10": 0.5}


def test_submodules_and_unknown_names():
    from harness import progress  # a submodule: imported as before

    assert progress.__name__ == "harness.progress"
    with pytest.raises(AttributeError, match="module 'harness' has no attribute 'nope'"):
        harness.nope  # noqa: B018
