"""Evaluation settings carried through the commands (settings review: cross-command consistency).

Each setting a number depends on is recorded beside it, as metrics.json records ``settings``.
"""

from __future__ import annotations

import json

from tests.cli.test_rerank_review2 import ByRow, files  # noqa: F401  (files: the fixture)

# One query, two judged documents: a (grade 1) and b (grade 2). Run A ranks a first, run B ranks b first.
QRELS = "q1\t0\ta\t1\nq1\t0\tb\t2\n"
RUN_A = "q1 Q0 a 1 2.0 A\nq1 Q0 b 2 1.0 A\n"
RUN_B = "q1 Q0 b 1 2.0 B\nq1 Q0 a 2 1.0 B\n"


def _optimise(harness_cli, tmp_path, *options):
    for name, text in (("qrels.txt", QRELS), ("a.trec", RUN_A), ("b.trec", RUN_B)):
        (tmp_path / name).write_text(text)
    out = tmp_path / "fused.trec"
    done = harness_cli("fuse", "--method", "wsum", "--run", tmp_path / "a.trec", "--run", tmp_path / "b.trec",
                       "-o", out, "--optimize", "--qrels", tmp_path / "qrels.txt", "--split", "dev",
                       "--metric", "P@1", *options)
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "fused.trec.json").read_text())["optimization"]


def test_fuse_optimize_records_the_relevance_threshold_its_score_was_computed_under(harness_cli, tmp_path):
    # wsum of the min-max normalised runs with weights (w, 1 - w): a = w, b = 1 - w (worked by hand). P@1 is 1
    # when the first document is relevant. Threshold 1: both are, every trial scores 1 and the last trial of
    # the grid wins (ranx's rule, score >= best): weights (1, 0). Threshold 2: only b is, first for w < 0.5
    # and at w = 0.5 by the tie rule (id descending: b before a), so the last trial scoring 1 is (0.5, 0.5).
    # The same --metric and score 1.0 thus come with other weights: the JSON must say under which threshold
    # (before the fix it recorded semantics and the identical-id rule, not the threshold).
    default = _optimise(harness_cli, tmp_path)
    assert default["chosen"] == {"weights": [1.0, 0.0]} and default["score"] == 1.0
    assert default["relevance_threshold"] == 1.0
    strict = _optimise(harness_cli, tmp_path, "--relevance-threshold", "2")
    assert strict["chosen"] == {"weights": [0.5, 0.5]} and strict["score"] == 1.0
    assert strict["relevance_threshold"] == 2.0
    assert [t["score"] for t in strict["trials"]] == [1.0] * 6 + [0.0] * 5


def test_rerank_evaluate_warns_of_cutoffs_past_its_depth_as_harness_run_does(harness_cli, files):
    tmp_path = files  # (the rerank review's dataset: d1-d3, q1 judging d3; first.trec ranks d3, d1, d2)
    rerank = ("rerank", "-d", tmp_path / "ds", "--run", tmp_path / "first.trec", "-r", f"{ByRow.__module__}:ByRow",
              "-o", tmp_path / "out.trec", "--depth", "2", "--evaluate")
    # The reranked run holds the top 2 (d3, d1) rescored: d1 (row 0) then d3. Its Recall@3 (1.0) is that of
    # 2 documents, as the Recall@3 of harness run --depth 2 is, which warns so (docs/evaluation: depth_warning).
    expected = ("warning: depth 2 is below the largest cutoff 3: values at cutoffs past 2 (NDCG@3, MAP@3, "
                "Recall@3, P@3, ...) are computed on the top 2 documents only")
    done = harness_cli(*rerank, "--k", "1,3")
    assert done.returncode == 0, done.stderr
    assert expected in done.stderr.splitlines()  # (before the fix: no warning)
    replay = harness_cli("run", "-d", tmp_path / "ds", "-r", "run-file", "-p", f"path={tmp_path / 'out.trec'}",
                         "--depth", "2", "--k", "1,3", "-o", tmp_path / "results")
    assert replay.returncode == 0, replay.stderr
    assert expected in replay.stderr.splitlines()
    done = harness_cli(*rerank, "--k", "1,2")  # every cutoff within the depth: nothing to say
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


def test_report_takes_the_metric_names_evaluate_takes(harness_cli, tmp_path):
    # README (Metrics): aliases such as ndcg_cut_10 and P_5 are accepted; harness evaluate -m and a bench
    # config's metrics read them as NDCG@10 and P@5. harness report -m refused them: "metric ndcg_cut_1 is
    # not in this result (it has ..., NDCG@1, ...)", exit 2.
    second = "q2 Q0 c 1 1.0 X\n"  # (paired tests need two queries)
    for name, text in (("qrels.txt", QRELS + "q2\t0\tc\t1\n"), ("a.trec", RUN_A + second), ("b.trec", RUN_B + second)):
        (tmp_path / name).write_text(text)
    for run in ("a", "b"):
        done = harness_cli("evaluate", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / f"{run}.trec",
                           "--k", "1", "--json", tmp_path / f"{run}.json")
        assert done.returncode == 0, done.stderr
    page = tmp_path / "report.html"
    done = harness_cli("report", tmp_path / "a.json", tmp_path / "b.json", "-m", "ndcg_cut_1", "-m", "P_1",
                       "--test", "t", "-o", page)
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert 'data-metric="NDCG@1"' in html and 'data-metric="P@1"' in html
    done = harness_cli("report", tmp_path / "a.json", tmp_path / "b.json", "-m", "MAP", "-o", page)  # one name: AP
    assert done.returncode == 2 and "metric AP" in done.stderr and "is not in this result" in done.stderr
