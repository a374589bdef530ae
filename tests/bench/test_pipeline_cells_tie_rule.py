"""A bench cell of a pipeline whose fuse stage is optimised is run again when the rule choosing among tied
trials changes (harness.fusion.optimize.TIE_RULE): the stage cache key names that rule (commit feef492:
"a stage optimised under the exact rule is computed again"), but the cell's fingerprint named only the
optimisation qrels' sha256, so ``harness bench`` reused a cell chosen under the old rule (its k picked by
the last bits of the means) while ``harness run --pipeline`` computed the stage again."""

from __future__ import annotations

import importlib

from harness.bench import load_config, run_bench

from .bench_helpers import write_tiny


def test_a_changed_tie_rule_reruns_an_optimised_pipeline_cell(tmp_path, monkeypatch):
    optimize = importlib.import_module("harness.fusion.optimize")  # (harness.fusion.optimize: also a function)

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    tiny = write_tiny(tmp_path / "tiny")
    (tmp_path / "a.trec").write_text("q1 Q0 d2 1 3.0 a\nq1 Q0 d1 2 2.0 a\nq2 Q0 d4 1 1.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d3 1 3.0 b\nq1 Q0 d2 2 2.0 b\nq2 Q0 d1 1 1.0 b\n")
    config = tmp_path / "bench.toml"
    config.write_text(
        f'name = "t"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
        f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
        f'[[pipelines]]\nlabel = "pipe"\n'
        f'[[pipelines.stages]]\nname = "a"\ntype = "retrieve"\nretriever = "run-file"\n'
        f'params = {{path = "{tmp_path / "a.trec"}"}}\n'
        f'[[pipelines.stages]]\nname = "b"\ntype = "retrieve"\nretriever = "run-file"\n'
        f'params = {{path = "{tmp_path / "b.trec"}"}}\n'
        f'[[pipelines.stages]]\nname = "f"\ntype = "fuse"\ninputs = ["a", "b"]\n'
        f'optimize = {{qrels = "{tiny / "qrels" / "test.tsv"}", metric = "P@1", k_grid = [10, 20], allow_test_split = true}}\n')
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["run"]
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["reused"]
    monkeypatch.setattr(optimize, "TIE_RULE", "another rule")  # (what a cell finished before feef492 was chosen by)
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["run"]
