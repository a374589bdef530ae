"""``harness fuse --optimize`` replaced a ``--k`` (rrf) or ``--weights`` (wsum) the user gave with the grid's
best value, silently: ``--method rrf --k 30 --optimize`` wrote the run of k = 100 (exit 0), as if the k
asked for had been used. Like ``--step`` with rrf's optimisation (a setting that changes nothing), it is
now refused with one line, before anything is read or written. rrf's ``--weights`` stay usable with
``--optimize`` (docs/fusion.md: "k in 10, 20, ..., 100, with the given weights").

Worked example: q1, run 1 = d1, d2, d3; run 2 = d3, d2, d4; d2 relevant. d2 is second in both runs
and d3 first in one and third in the other, so every k ranks d3, d2, d1, d4 (d2 at rank 2,
NDCG@10 = 1 / log2(3) = 0.630930): every trial ties and the last k (100) is chosen; with rrf weights
2, 1 d2 comes first at every k of the grid (NDCG@10 = 1).
"""

from __future__ import annotations

import pytest


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 3 x\nq1 Q0 d2 2 2 x\nq1 Q0 d3 3 1 x\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d3 1 3 x\nq1 Q0 d2 2 2 x\nq1 Q0 d4 3 1 x\n")
    (tmp_path / "dev.qrels").write_text("q1 0 d2 1\n")
    return tmp_path


@pytest.mark.parametrize("given,message", [
    (["--method", "rrf", "--k", "30"],
     "error: --k does not apply with --optimize, which tunes rrf's k (--k-grid); give one or the other"),
    (["--method", "wsum", "--weights", "0.9,0.1"],
     "error: --weights does not apply with --optimize, which tunes wsum's weights (--step); give one or the other"),
])
def test_a_tuned_value_given_with_optimize_is_refused(files, harness_cli, given, message):
    out = files / "fused.trec"
    result = harness_cli("fuse", *given, "--run", files / "a.trec", "--run", files / "b.trec", "-o", out,
                         "--optimize", "--qrels", files / "dev.qrels")
    assert result.returncode == 2  # before: 0, and the run of k=100 / weights=[1.0, 0.0] written
    assert result.stderr.strip() == message
    assert not out.exists() and not (files / "fused.trec.json").exists()


def test_rrf_weights_and_plain_k_still_work(files, harness_cli):
    out = files / "fused.trec"
    result = harness_cli("fuse", "--method", "rrf", "--weights", "2,1", "--run", files / "a.trec", "--run",
                         files / "b.trec", "-o", out, "--optimize", "--qrels", files / "dev.qrels")
    assert result.returncode == 0, result.stderr
    # weights 2, 1: d2 = 3 / (k + 2) beats d3 = 2 / (k + 3) + 1 / (k + 1) for every k > 1: NDCG@10 = 1
    assert "k=100  NDCG@10 = 1.000000 (10 trials)" in result.stdout
    result = harness_cli("fuse", "--method", "rrf", "--k", "30", "--run", files / "a.trec", "--run", files / "b.trec",
                         "-o", out)
    assert result.returncode == 0, result.stderr
