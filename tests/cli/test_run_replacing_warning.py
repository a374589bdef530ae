"""``harness run`` into a result folder that holds another system's result says so before it replaces it.

``harness run -p k1=1.2`` and then ``harness run`` both write results/<dataset>/bm25/: the second replaced the
first's files without a word, and the folder's numbers were no longer the ones its owner had run. Now one warning
line on stderr names what differs (retriever, parameters, split), before anything is indexed; a rerun of the same
system replaces its folder silently, as before, and ``-q`` keeps to the result line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_pysnippets_docs import tiny_beir


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    data = tiny_beir(tmp_path / "tiny")
    (data / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n", encoding="utf-8")
    return data


def run(harness_cli, data, out, *args):
    done = harness_cli("run", "-d", data, "-o", out, *args)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("warning: ")]


def test_other_parameters_are_named_before_the_folder_is_replaced(harness_cli, folder, tmp_path):
    out = tmp_path / "results"
    assert run(harness_cli, folder, out) == []  # (nothing there yet)
    assert run(harness_cli, folder, out) == []  # the same system again: replaced silently
    warnings = run(harness_cli, folder, out, "-p", "k1=1.2", "-p", "fields=multifield")
    assert warnings == [f"warning: {out / 'tiny' / 'bm25'} holds the result of another run (parameters "
                        'fields unset (now "multifield"), k1 0.9 (now 1.2)), which this run replaces: '
                        "give --name to keep both"]
    document = json.loads((out / "tiny" / "bm25" / "metrics.json").read_text())
    assert document["retriever"]["params"]["k1"] == 1.2  # (replaced: the warning does not stop the run)


def test_another_retriever_or_split_is_named(harness_cli, folder, tmp_path):
    out = tmp_path / "results"
    run(harness_cli, folder, out)
    assert run(harness_cli, folder, out, "-r", "sqlite", "--name", "bm25") == [
        f"warning: {out / 'tiny' / 'bm25'} holds the result of another run (retriever 'bm25', not 'sqlite'), "
        "which this run replaces: give --name to keep both"]
    run(harness_cli, folder, out)
    assert run(harness_cli, folder, out, "--split", "dev") == [
        f"warning: {out / 'tiny' / 'bm25'} holds the result of another run (split 'test', not 'dev'), "
        "which this run replaces: give --name to keep both"]


def test_quiet_runs_and_unreadable_results_get_no_warning(harness_cli, folder, tmp_path):
    out = tmp_path / "results"
    run(harness_cli, folder, out)
    done = harness_cli("run", "-d", folder, "-o", out, "-p", "k1=1.2", "-q")
    assert done.returncode == 0 and "warning" not in done.stderr
    (out / "tiny" / "bm25" / "metrics.json").write_text("{not json", encoding="utf-8")
    assert run(harness_cli, folder, out, "-p", "k1=2.0") == []


def test_a_pipeline_whose_stages_changed_is_named(harness_cli, folder, tmp_path):
    out, spec = tmp_path / "results", tmp_path / "pipeline.toml"
    stages = ('name = "fused"\n[[stages]]\nname = "flat"\ntype = "retrieve"\nretriever = "bm25"\n'
              '[[stages]]\nname = "mf"\ntype = "retrieve"\nretriever = "bm25"\nparams = { fields = "multifield" }\n'
              '[[stages]]\nname = "rrf"\ntype = "fuse"\ninputs = ["flat", "mf"]\nmethod = "rrf"\n')
    spec.write_text(stages, encoding="utf-8")
    assert run(harness_cli, folder, out, "--pipeline", spec) == []
    assert run(harness_cli, folder, out, "--pipeline", spec) == []  # (the same pipeline again)
    spec.write_text(stages + "k = 10\n", encoding="utf-8")
    assert run(harness_cli, folder, out, "--pipeline", spec) == [
        f"warning: {out / 'tiny' / 'fused'} holds the result of another run (parameters pipeline changed), "
        "which this run replaces: give --name to keep both"]


def test_the_python_api_warns_too(folder, tmp_path):
    """run_experiment and run_pipeline with an output_dir holding another system's result issue a
    ReplacedResultWarning (a HarnessWarning) before they run; a rerun of the same system none. (Before, only
    ``harness run`` said so: a script calling run_experiment twice replaced the first result silently.)"""
    import warnings

    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.experiment import run_experiment
    from harness.pipeline import parse_pipeline, run_pipeline
    from harness.registry import create
    from harness.reports.replacing import ReplacedResultWarning

    ds, out = load_dataset(str(folder)), tmp_path / "api" / "bm25"
    evaluator = Evaluator(["NDCG"], k_values=[10])

    def issued(call) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        return [str(w.message) for w in caught if issubclass(w.category, ReplacedResultWarning)]

    assert issued(lambda: run_experiment(ds, create("bm25"), evaluator, [10], output_dir=out)) == []
    assert issued(lambda: run_experiment(ds, create("bm25"), evaluator, [10], output_dir=out)) == []
    assert issued(lambda: run_experiment(ds, create("bm25", k1=1.2), evaluator, [10], output_dir=out)) == [
        f"{out} holds the result of another run (parameters k1 0.9 (now 1.2)), which this run replaces: "
        "give another output_dir to keep both"]
    assert json.loads((out / "metrics.json").read_text())["retriever"]["params"]["k1"] == 1.2  # (replaced)
    fused = tmp_path / "api" / "fused"
    stages = [{"name": "flat", "type": "retrieve", "retriever": "bm25"},
              {"name": "mf", "type": "retrieve", "retriever": "bm25", "params": {"fields": "multifield"}},
              {"name": "rrf", "type": "fuse", "inputs": ["flat", "mf"], "method": "rrf"}]
    assert issued(lambda: run_pipeline(ds, parse_pipeline({"name": "fused", "stages": stages}), evaluator, [10],
                                       output_dir=fused)) == []
    assert issued(lambda: run_pipeline(ds, parse_pipeline({"name": "fused", "stages": stages}), evaluator, [10],
                                       output_dir=fused)) == []
    stages[2]["k"] = 10  # (RRF's k)
    assert issued(lambda: run_pipeline(ds, parse_pipeline({"name": "fused", "stages": stages}), evaluator, [10],
                                       output_dir=fused)) == [
        f"{fused} holds the result of another run (parameters pipeline changed), which this run replaces: "
        "give another output_dir to keep both"]
    assert issued(lambda: run_experiment(ds, create("bm25"), evaluator, [10], output_dir=fused)) == [
        f"{fused} holds the result of another run (retriever 'fused', not 'bm25'), which this run replaces: "
        "give another output_dir to keep both"]
