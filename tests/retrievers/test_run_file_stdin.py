"""``harness run -r run-file -p path=-`` replays a run read from standard input (retrievers/run_file.py);
before, ``-`` was a file name: ``error: run file not found: -``. Read once, at the first params() or
run(), after every option is checked; recorded as ``<stdin>`` with the sha256 of the bytes read; a bad
line named ``<stdin>:LINE``. Two pipeline stages replaying ``-`` are refused before anything is read
(harness/cli/run.py ``_refuse_stdin_twice``).

Expected values, a worked example: q1 judges d3 relevant (grade 1); the run ranks d3 (3.0), d1 (2.0):
P@1 = 1, Recall@1 = 1, NDCG@3 = 1; q2 judges d2 and the run ranks d1, d2: P@1 = 0, P@3 = 1/3,
NDCG@3 = (1/log2 3) / 1 = 0.6309298; and the same metrics from the same bytes given as a file (the
path that worked before)."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys

import pytest

RUN = b"q1 Q0 d3 1 3.0 f\nq1 Q0 d1 2 2.0 f\nq2 Q0 d1 1 2.0 f\nq2 Q0 d2 2 1.0 f\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "{d}", "title": "", "text": "t"}}\n' for d in ("d1", "d2", "d3")))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td2\t1\n")
    (tmp_path / "run.trec").write_bytes(RUN)
    return tmp_path


def harness(*args, stdin: bytes = b""):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], input=stdin, capture_output=True,
                          timeout=120)


def _replay(files, path, out: str, stdin: bytes = b""):
    proc = harness("run", "-d", files / "ds", "-r", "run-file", "-p", f"path={path}", "--k", "1,3", "-o",
                   files / out, "-q", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    return json.loads((files / out / "ds" / "run-file" / "metrics.json").read_text())


def test_path_dash_replays_standard_input(files):
    document = _replay(files, "-", "from_stdin", stdin=RUN)
    assert document["retriever"]["params"] == {"path": "<stdin>", "sha256": hashlib.sha256(RUN).hexdigest()}
    metrics = document["metrics"]
    assert metrics["P@1"] == pytest.approx(0.5, abs=1e-12)
    assert metrics["P@3"] == pytest.approx((1 / 3 + 1 / 3) / 2, abs=1e-12)
    assert metrics["NDCG@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-12)
    assert _replay(files, files / "run.trec", "from_file")["metrics"] == metrics


def test_a_bad_line_on_stdin_is_named(files):
    proc = harness("run", "-d", files / "ds", "-r", "run-file", "-p", "path=-", "-o", files / "out", "-q",
                   stdin=RUN + b"q2 Q0 d3 3 x f\n")
    assert (proc.returncode, proc.stderr.decode()) == (2, "error: <stdin>:5: score 'x' is not a number (id 'd3')\n")


def test_two_stages_replaying_stdin_are_refused(files):
    (files / "p.toml").write_text('name = "two"\n'
                                  '[[stages]]\nname = "a"\ntype = "retrieve"\nretriever = "run-file"\n'
                                  'params = { path = "-" }\n'
                                  '[[stages]]\nname = "b"\ntype = "retrieve"\nretriever = "run-file"\n'
                                  'params = { path = "-" }\n'
                                  '[[stages]]\nname = "f"\ntype = "fuse"\ninputs = ["a", "b"]\n')
    proc = harness("run", "-d", files / "ds", "--pipeline", files / "p.toml", "-o", files / "out", "-q", stdin=RUN)
    assert proc.returncode == 2
    assert proc.stderr.decode() == ('error: stages \'a\' and \'b\' both replay path = "-": standard input can be '
                                    "read once; give the other as a file\n")
    assert not (files / "out").exists()
    # one stage replaying it: read (the fusion of the run with BM25 is written)
    (files / "p.toml").write_text((files / "p.toml").read_text().replace(
        'retriever = "run-file"\nparams = { path = "-" }\n[[stages]]\nname = "f"', 'retriever = "bm25"\n'
        '[[stages]]\nname = "f"'))
    proc = harness("run", "-d", files / "ds", "--pipeline", files / "p.toml", "-o", files / "out", "-q", stdin=RUN)
    assert proc.returncode == 0, proc.stderr
