"""`harness evaluate` inputs read once and never overwritten (second formats review).

* ``--json`` with a piped input (``--run <(cat run)``): the sha256 recorded in metrics.json was taken by a
  thread reading the same path beside the parse. A pipe can be read once, so the two readers split its
  bytes: the run was read as empty ("the run file is empty"), cut mid-line, or, with the qrels piped,
  silently without some judgments (NDCG@10 0.1170 for 0.1214, exit 0). Expected: the values of the same
  file read from disk, and the sha256 of its bytes.
* ``--json run.trec`` or ``--markdown qrels`` naming an input replaced the user's file with the metrics.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys

import pytest


def harness(*args, shell=False):
    if shell:
        return subprocess.run(["bash", "-c", " ".join(args)], capture_output=True, text=True, timeout=60)
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def files(tmp_path):
    rng = random.Random(3)
    (tmp_path / "run").write_text("".join(f"q{q} Q0 d{d} {d + 1} {rng.random():.6f} t\n"
                                          for q in range(50) for d in range(40)))
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}\n"
                                            for q in range(50) for d in range(0, 40, 3)))
    return tmp_path


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")
def test_piped_inputs_with_json_are_read_whole_and_hashed(files):
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "run", "--k", "10", "--json",
                   files / "disk.json")
    assert proc.returncode == 0, proc.stderr
    expected = json.loads((files / "disk.json").read_text())
    for qrels, run, name in [(files / "qrels", f"<(cat {files / 'run'})", "r.json"),
                             (f"<(cat {files / 'qrels'})", f"<(cat {files / 'run'})", "qr.json")]:
        proc = harness(sys.executable, "-m", "harness", "evaluate", "--qrels", str(qrels), "--run", run,
                       "--k", "10", "--json", str(files / name), shell=True)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads((files / name).read_text())
        assert doc["metrics"] == expected["metrics"] and doc["per_query"] == expected["per_query"]
        assert doc["retriever"]["params"]["sha256"] == hashlib.sha256((files / "run").read_bytes()).hexdigest()
        assert list(doc["dataset"]["files"].values()) == [hashlib.sha256((files / "qrels").read_bytes()).hexdigest()]


@pytest.mark.parametrize("option, target", [("--json", "run"), ("--markdown", "qrels"), ("--json", "qrels")])
def test_an_output_naming_an_input_is_refused_before_anything_is_written(files, option, target):
    before = (files / target).read_bytes()
    proc = harness("evaluate", "--qrels", files / "qrels", "--run", files / "run", "--k", "10", option,
                   files / target)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {option} {files / target}: is the input file {files / target}; writing there would replace it"]
    assert (files / target).read_bytes() == before
