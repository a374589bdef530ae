"""Runs and qrels written under a ``.gz`` name are gzipped, so they read back (end-to-end review).

The readers decompress a ``.gz`` file (docs/evaluation.md); the writers wrote plain text under such a
name, so ``harness fuse -o fused.trec.gz`` (or ``harness rerank -o ...gz``) left a file that
``harness evaluate`` then refused: "cannot read run file: Not a gzipped file".
"""

from __future__ import annotations

import gzip

import numpy as np

from harness.formats.trec import read_qrels, read_run, write_qrels, write_run
from harness.qrels import Qrels
from harness.run import Run


def test_run_and_qrels_round_trip_through_gz(tmp_path):
    run = Run.from_dict({"q1": {"d1": 1.0000000001, "d2": -0.0, "é": 2.5}, "q2": {"d1": 0.1}})
    write_run(run, tmp_path / "run.trec.gz", tag="t")
    assert gzip.decompress((tmp_path / "run.trec.gz").read_bytes()).decode().splitlines()[0] == "q1 Q0 é 1 2.5 t"
    back = read_run(tmp_path / "run.trec.gz")
    assert back.to_dict() == run.to_dict()
    assert np.signbit(back.to_dict()["q1"]["d2"])
    qrels = Qrels.from_rows([("q1", "d1", 2.0), ("q1", "d2", 0.5)])
    write_qrels(qrels, tmp_path / "qrels.gz")
    assert read_qrels(tmp_path / "qrels.gz").to_dict() == qrels.to_dict()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # (atomic: no temp left)


def test_fuse_to_gz_then_evaluate(harness_cli, tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d3 2 1.0 t\n")
    (tmp_path / "qrels.tsv").write_text("q1\td2\t1\n")
    fused = harness_cli("fuse", "--run", tmp_path / "a.trec", "--run", tmp_path / "b.trec", "-o", tmp_path / "f.trec.gz")
    assert fused.returncode == 0, fused.stderr
    done = harness_cli("evaluate", "--qrels", tmp_path / "qrels.tsv", "--run", tmp_path / "f.trec.gz", "--k", "1",
                       "-m", "P@1", "--json", tmp_path / "m.json")
    assert done.returncode == 0, done.stderr
    # RRF (k = 60): d2 is ranked 2nd in a and 1st in b, 1/62 + 1/61 > 1/61 (d1) and 1/62 (d3): P@1 = 1.
    import json

    assert json.loads((tmp_path / "m.json").read_text())["metrics"]["P@1"] == 1.0
