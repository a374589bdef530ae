"""Bench cells finished by earlier builds of this release, rerun by this one (harness/bench/cells.py).

A cell's fingerprint names the harness's version (0.1.0 since the first build) and nothing of its code,
so a cell finished before a fix that moved its numbers was reused after it: with the harness of
1f129d1, rank-bm25 with k1 = 0 scored NDCG@10 0.1 on a 300-document SciFact slice, and the HEAD
benchmark over that folder reused the cell (0 run, 4 reused) where a cold run gives 0.8481; with the
harness of 37de695 (before 9be498f) NDCG_exp of a perfect ranking of grades 1e-17 and 2e-17 was 0.0,
where it is 1.0. A finished cell now also records :data:`harness.bench.cells.NUMBERS_VERSION`
(metrics.json's ``bench.numbers``), which cells of earlier builds lack.

Worked example: q1 judges d2 2e-17 and d3 1e-17 (relevance threshold 1e-18); the run ranks d2 then d3,
the ideal ranking: NDCG_exp@10 = 1.0 (2^rel - 1 gains, trec_eval's ndcg over its own ideal). The cell
as 37de695 (or, with its fingerprint as written, 1f129d1) left it: the same fingerprint, no
``bench.numbers``, NDCG_exp@10 0.0.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import harness
from harness.bench import load_config, run_bench
from harness.bench.cells import NUMBERS_VERSION, fingerprint

from .bench_helpers import write_tiny


def _setup(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")
    (tiny / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t2e-17\nq1\td3\t1e-17\n")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d3 2 1.0 s\n")
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [10]\nmetrics = ["NDCG_exp@10"]\nrelevance_threshold = 1e-18\n'
                      f'output_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{run}"}}\n')
    return config


def _statuses(config):
    return [(o.status, o.document.metrics["NDCG_exp@10"]) for o in run_bench(load_config(config)).outcomes]


@pytest.mark.parametrize("form", ["37de695", "1f129d1"])
def test_a_cell_finished_by_an_earlier_build_of_the_release_is_run_again(tmp_path, form):
    config = _setup(tmp_path)
    assert _statuses(config) == [("run", 1.0)]
    metrics_json = tmp_path / "results" / "t" / "tiny" / "mine" / "metrics.json"
    doc = json.loads(metrics_json.read_text())
    assert doc["bench"]["numbers"] == NUMBERS_VERSION
    del doc["bench"]["numbers"]  # (what no earlier build recorded)
    doc["metrics"]["NDCG_exp@10"] = 0.0  # (37de695's value: exp2(rel) - 1 cancelled)
    if form == "1f129d1":  # its fingerprint: the blob as written (before equal numbers), copied from it
        spec = load_config(config).retrievers[0]
        files, resolved, evaluation = doc["dataset"]["files"], doc["retriever"]["params"], doc["bench"]["evaluation"]
        blob = {"dataset": {"split": "test", "files": dict(sorted(files.items()))},
                "retriever": {"type": spec.type, "params": spec.params, "resolved": resolved},
                "evaluation": evaluation, "harness": harness.__version__}
        old = hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
        assert old == fingerprint(files, "test", spec, resolved, evaluation, as_written=True) \
            != doc["bench"]["fingerprint"]
        doc["bench"]["fingerprint"] = old
    metrics_json.write_text(json.dumps(doc))
    assert _statuses(config) == [("run", 1.0)]  # (was [("reused", 0.0)])
    assert _statuses(config) == [("reused", 1.0)]
