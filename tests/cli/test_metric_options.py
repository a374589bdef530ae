"""`--metric` and `--relevance-threshold` on `harness evaluate` and `harness run`, end to end.

Expected values: /work/shared/metric-examples.md F1-F6 (float grades, threshold 0.5), re-derived in
tests/evaluation/test_golden_examples.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

FLOAT_QRELS = {"q1": {"d1": 1.0, "d2": 0.5, "d3": 0.3, "d4": 0.1},
               "q2": {"d1": 0.7, "d2": 1.0, "d3": 0.2, "d4": 0.1},
               "q3": {"d1": 0.4, "d2": 0.2, "d3": 1.0, "d4": 0.1}}


def harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True)


@pytest.fixture
def float_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in FLOAT_QRELS.items() for d, g in docs.items()))
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 d{r} {r} {5 - r} t\n" for q in FLOAT_QRELS for r in range(1, 5)))
    return qrels, run


def test_evaluate_float_grades_threshold_and_extra_metrics(float_files, tmp_path):
    qrels, run = float_files
    out = tmp_path / "m.json"
    proc = harness("evaluate", "--qrels", str(qrels), "--run", str(run), "--k", "2", "--relevance-threshold", "0.5",
                   "-m", "NDCG_exp,bpref", "--metric", "Success", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    means = doc["metrics"]
    assert list(means) == ["NDCG@2", "MAP@2", "Recall@2", "P@2", "R_cap@2", "MRR@2", "NDCG_exp@2", "bpref",
                           "Success@2"]
    assert means["NDCG@2"] == pytest.approx(0.781117, abs=1e-6)  # F1
    assert means["NDCG_exp@2"] == pytest.approx(0.748190, abs=1e-6)  # F2
    for name in ("P@2", "MRR@2", "Recall@2", "MAP@2"):  # F3-F6
        assert means[name] == pytest.approx(0.666667, abs=1e-6)
    assert doc["settings"]["relevance_threshold"] == 0.5
    assert doc["per_query"]["q3"]["Success@2"] == 0.0  # q3's only relevant document is at rank 3


def test_unknown_metric_exits_2_with_one_line(float_files):
    qrels, run = float_files
    proc = harness("evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "NDCG_foo@10")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: --metric: unknown metric 'NDCG_foo@10'; known: 11pt_avg, AP, DCG, Judged, MAP, MRR, NDCG, NDCG_all, "
        "P, R-Prec, RR, R_cap, Recall, Rndcg, Rprec_mult, Success, bpref, iprec_at_recall, ndcg_rel, "
        "num_nonrel_judged_ret, num_rel, num_rel_ret, num_ret, set_F, set_P, set_map, set_recall, set_relative_P"]


def test_run_with_extra_metrics(tmp_path):
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n"
        for i, text in enumerate(["apple pie recipe", "banana bread", "apple tart", "car engine", "red bus", "blue sky"])))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "apple recipe"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t2\nq1\td2\t1\nq1\td3\t0\n")
    proc = harness("run", "--dataset", str(folder), "--k", "1,3", "-m", "bpref,Judged,DCG_jarvelin",
                   "--output-dir", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    means = json.loads((tmp_path / "out" / "tiny" / "bm25" / "metrics.json").read_text())["metrics"]
    # BM25 ranks d0 ("apple pie recipe": both terms) first, then d2 ("apple tart"); d3 never matches.
    assert means["bpref"] == 1.0 and means["Judged@1"] == 1.0 and means["P@1"] == 1.0
    assert means["Judged@3"] == 1.0  # two documents retrieved, both judged; denominator min(k, retrieved)
    assert means["DCG_jarvelin@3"] == pytest.approx(2 + 1 / 1.0)  # rel_1 + rel_2 / max(1, log2 2)


def test_k_values_are_checked_and_named_as_k():
    # parse_k: comma-separated integers in [1, 2^63 - 1] (ranks are int64); a larger one used to reach
    # the metric constructor and be reported under --metric's name.
    from harness.cli.options import parse_k
    from harness.errors import HarnessError

    assert parse_k("10,1, 3,10") == [1, 3, 10]
    assert parse_k(str(2**63 - 1)) == [2**63 - 1]
    for text, message in [("0,5", "--k values must be >= 1"), ("x", "--k takes comma-separated integers"),
                          ("1," + str(2**63), "--k values must be at most 2^63 - 1")]:
        with pytest.raises(HarnessError, match=re.escape(message)):
            parse_k(text)
