"""harness run notes what harness evaluate notes: judged queries missing from the run, queries left out
for want of a document judged relevant (NFCorpus review: 15 BM25 queries matched nothing, silently; at
--relevance-threshold 2, 204 of 323 queries left out, and metrics.md called them 'without relevant
judgments' though they had grade-1 ones)."""

from __future__ import annotations

import json


def _tiny(tmp_path):
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                 for d, t in (("d1", "apple"), ("d2", "pear"), ("d3", "plum"))))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                                                  for q, t in (("q1", "apple"), ("q2", "kiwi"), ("q3", "plum"))))
    # q1: grade 2; q2 (matches nothing): grade 2; q3: grade 1 only
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t2\nq3\td3\t1\n")
    return folder


def test_harness_run_notes_missing_and_left_out_queries(harness_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    folder = _tiny(tmp_path)
    done = harness_cli("run", "-d", folder, "-r", "bm25", "--k", "1", "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "note: 1 judged queries are missing from the run and score 0" in done.stderr  # q2: no term matches
    assert "left out" not in done.stderr
    done = harness_cli("run", "-d", folder, "-r", "bm25", "--k", "1", "--relevance-threshold", "2",
                       "-o", tmp_path / "out2")
    assert done.returncode == 0, done.stderr
    assert "note: 1 queries have no document judged relevant (grade >= 2) and are left out" in done.stderr  # q3
    header = (tmp_path / "out2" / "tiny" / "bm25" / "metrics.md").read_text().splitlines()[2]
    assert header == ("2 queries evaluated (1 missing from the run, scored 0; 1 with no document judged relevant "
                      "(grade >= 2), left out).")
    assert "note:" not in harness_cli("run", "-d", folder, "-r", "bm25", "--k", "1", "-q", "-o",
                                      tmp_path / "out3").stderr


def test_harness_evaluate_notes_left_out_queries_as_run_does(harness_cli, tmp_path):
    """At a threshold no judgment reaches, evaluate printed a table of 0.0000 (0 queries) with no word of
    why; it notes the queries left out, as harness run now does."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq2 0 b 1\nq3 0 c 1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 r\nq2 Q0 b 1 2.0 r\n")
    done = harness_cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P@1", "--relevance-threshold", "2")
    assert done.returncode == 0
    assert "note: 2 queries have no document judged relevant (grade >= 2) and are left out" in done.stderr
    assert "left out" not in harness_cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P@1").stderr


def test_the_threshold_is_printed_with_its_digits(harness_cli, tmp_path):
    """':g' printed --relevance-threshold 0.123456789 as 0.123457 (session review)."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 0.5\nq2 0 b 0.1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 r\n")
    done = harness_cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P@1", "--relevance-threshold", "0.123456789")
    assert "note: 1 queries have no document judged relevant (grade >= 0.123456789) and are left out" in done.stderr
