"""A relevance threshold no judgment reaches is one error line before any work, not a table of zeros.

No metric is defined for a query without a relevant document, so every query is left out and every mean is
over no query (the evaluator's 0.0). On SciFact, whose 339 test judgments all have grade 1,
``harness run --relevance-threshold 2`` indexed, searched and printed NDCG/MAP/Recall/P/R_cap/MRR of 0.0000 with
a note that the 300 queries were left out; a benchmark cell recorded NDCG@10 0.0 on its leaderboard
(session 15 bench review). Now run, evaluate, a pipeline and a bench cell stop at once with one line; the
Python API's ``Evaluator.evaluate`` still returns the means of no query (tests/evaluation/test_metric_names.py).
"""

from __future__ import annotations

from harness.bench import load_config, run_bench
from harness.datasets import BUNDLED
from tests.bench.bench_helpers import write_tiny

LINE = ("error: no judgment reaches the relevance threshold 2 (the qrels' highest grade is 1): every query would "
        "be left out and no metric is defined; give a lower threshold")


def test_run_and_evaluate_refuse_a_threshold_above_every_grade(harness_cli, tmp_path):
    done = harness_cli("run", "-d", "scifact", "--relevance-threshold", "2", "-o", tmp_path / "out")
    assert (done.returncode, done.stderr.strip().splitlines()) == (2, [LINE])
    assert not (tmp_path / "out").exists()  # refused before the index was built: nothing written
    run = tmp_path / "r.trec"
    run.write_text("1 Q0 31715818 1 1.0 x\n")
    qrels = BUNDLED / "scifact" / "qrels" / "test.tsv"
    done = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--relevance-threshold", "2")
    assert (done.returncode, done.stderr.strip().splitlines()) == (2, [LINE])
    # at the highest grade the run is evaluated: 300 queries judged relevant at grade >= 1
    done = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--relevance-threshold", "1", "-m", "P@1")
    assert done.returncode == 0, done.stderr


def test_a_bench_cell_with_such_a_threshold_fails_with_the_line(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")  # grades 2 and 1
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [1]\nmetrics = ["P@1"]\nrelevance_threshold = 3\n'
                      f'output_dir = "{tmp_path / "results"}"\ndatasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      '[[retrievers]]\ntype = "bm25"\n')
    (outcome,) = run_bench(load_config(config)).outcomes
    assert outcome.status == "failed"
    assert outcome.error.endswith("no judgment reaches the relevance threshold 3 (the qrels' highest grade is 2): "
                                  "every query would be left out and no metric is defined; give a lower threshold")


def test_rerank_evaluate_and_fuse_optimize_refuse_it_too(harness_cli, tmp_path):
    run = tmp_path / "r.trec"
    run.write_text("1 Q0 31715818 1 2.0 x\n1 Q0 4983 2 1.0 x\n")
    done = harness_cli("rerank", "-d", "scifact", "--run", run, "-r", "bi-encoder", "-o", tmp_path / "rr.trec",
                       "--evaluate", "--relevance-threshold", "2")
    assert (done.returncode, done.stderr.strip().splitlines()) == (2, [LINE])
    assert not (tmp_path / "rr.trec").exists()
    qrels = BUNDLED / "scifact" / "qrels" / "test.tsv"
    done = harness_cli("fuse", "--run", run, "--run", run, "-o", tmp_path / "f.trec", "--optimize", "--qrels", qrels,
                       "--allow-test-split", "--relevance-threshold", "2")
    assert (done.returncode, done.stderr.strip().splitlines()) == (2, [LINE])  # (every trial scored 0, tied)
