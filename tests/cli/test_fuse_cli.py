"""``harness fuse`` end to end through the entry point: files, errors, optimisation sidecar, real data."""

from __future__ import annotations

import json
import math

import pytest

from harness.datasets import BUNDLED
from harness.evaluation import evaluate
from harness.formats.trec import read_qrels, read_run
from harness.fusion import fuse
from tests.cli.test_cli import harness

RUN_A = "q Q0 d1 1 3.0 a\nq Q0 d2 2 2.0 a\nq Q0 d3 3 1.0 a\n"
RUN_B = "q Q0 d2 1 4.0 b\nq Q0 d4 2 2.0 b\nq Q0 d3 3 0.0 b\n"


@pytest.fixture
def runs(tmp_path):
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    return tmp_path


def test_rrf_fuses_two_files(runs):
    out = runs / "fused.trec"
    proc = harness("fuse", "--run", str(runs / "a.trec"), "--run", str(runs / "b.trec"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "fused 2 runs (rrf, norm none)" in proc.stdout
    # hand-computed: d2 1/62 + 1/61, d3 2/63, d1 1/61, d4 1/62 (see tests/fusion/test_worked_examples.py)
    assert out.read_text() == (f"q Q0 d2 1 {1 / 62 + 1 / 61!r} rrf\nq Q0 d3 2 {1 / 63 + 1 / 63!r} rrf\n"
                                f"q Q0 d1 3 {1 / 61!r} rrf\nq Q0 d4 4 {1 / 62!r} rrf\n")
    assert not (runs / "fused.trec.json").exists()  # no sidecar unless optimising or --json


def test_wsum_weights_norm_depth_and_json(runs):
    out, side = runs / "f.trec", runs / "f.json"
    proc = harness("fuse", "--method", "wsum", "--weights", "0.25,0.75", "--norm", "minmax", "--depth", "2",
                   "--run", str(runs / "a.trec"), "--run", str(runs / "b.trec"), "-o", str(out), "--json", str(side))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "q Q0 d2 1 0.875 wsum\nq Q0 d4 2 0.375 wsum\n"  # 0.25*0.5 + 0.75*1, 0.75*0.5
    doc = json.loads(side.read_text())
    assert doc["fusion"] == {"method": "wsum", "norm": "min-max", "k": None, "weights": [0.25, 0.75], "depth": 2}
    assert [r["path"] for r in doc["runs"]] == [str(runs / "a.trec"), str(runs / "b.trec")]
    assert len(doc["runs"][0]["sha256"]) == 64 and "optimization" not in doc


@pytest.mark.parametrize("args,message", [
    (["--weights", "0.7,0.2,0.1"], "error: 3 weights given for 2 runs; give one weight per run"),
    (["--weights", "0.7,x"], "error: --weights takes comma-separated numbers, e.g. 0.7,0.3; got '0.7,x'"),
    # a weight is its run's by position: an empty item was dropped (two weights, 0.7 for a and 0.3 for b, no error);
    # 1_0 was Python's 10, a full-width digit Python's 0.5 (session 15 fusion review)
    (["--weights", "0.7,,0.3"], "error: --weights takes comma-separated numbers, e.g. 0.7,0.3; got '0.7,,0.3'"),
    (["--weights", "1_0,1"], "error: --weights takes comma-separated numbers, e.g. 0.7,0.3; got '1_0,1'"),
    (["--weights", "\uff10.5,0.5"], "error: --weights takes comma-separated numbers, e.g. 0.7,0.3; got '\uff10.5,0.5'"),
    (["--optimize", "--qrels", "dev.tsv", "--split", "dev", "--k-grid", "1_0,2_0"],
     "error: --k-grid takes comma-separated numbers, e.g. 10,20,30; got '1_0,2_0'"),
    (["--method", "borda"], "error: unknown fusion method 'borda'; choose one of rrf, combsum, combmnz, combmax, "
                            "combmin, wsum"),
    (["--norm", "l2"], "error: unknown score normalisation 'l2'; choose one of none, min-max, max, sum, zmuv, rank"),
    (["--k", "-1"], "error: RRF k must be an integer >= 0 (at most 2^63 - 1), got -1"),
    (["--k", str(2**63)], f"error: RRF k must be an integer >= 0 (at most 2^63 - 1), got {2**63}"),
    (["--weights", "0,0"], "error: weights must not all be 0, got [0.0, 0.0]"),
    (["--method", "combsum", "--weights", "1,2"], "error: weights apply to rrf and wsum only, not to combsum"),
    (["--optimize"], "error: --optimize needs --qrels (training or dev judgments)"),
    (["--optimize", "--qrels", "dev.tsv", "--metric", "NDCG"],
     "error: optimisation needs one metric with its cutoff (e.g. NDCG@10), got 'NDCG'"),
    (["--method", "wsum", "--optimize", "--qrels", "dev.tsv", "--step", "0"],
     "error: weight step must divide 1 (e.g. 0.1, 0.05, 0.25), got 0.0"),
    (["--method", "combsum", "--optimize", "--qrels", "dev.tsv"],
     "error: combsum has no parameter to optimise (optimisation tunes rrf's k or wsum's weights)"),
])
def test_bad_options_exit_2_with_one_line_and_write_nothing(runs, args, message):
    (runs / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td4\t1\n")
    out = runs / "out.trec"
    proc = harness("fuse", "--run", str(runs / "a.trec"), "--run", str(runs / "b.trec"), "-o", str(out), *args,
                   cwd=runs)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [message]
    assert not out.exists() and not (runs / "out.trec.json").exists()


def test_unreadable_or_single_run_exits_2(runs):
    out = runs / "out.trec"
    proc = harness("fuse", "--run", str(runs / "a.trec"), "--run", str(runs / "missing.trec"), "-o", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {runs / 'missing.trec'}: cannot read run file: "
                                                "No such file or directory"]
    (runs / "bad.trec").write_text("q Q0 d1 1 0.5\n")
    proc = harness("fuse", "--run", str(runs / "a.trec"), "--run", str(runs / "bad.trec"), "-o", str(out))
    assert proc.returncode == 2 and "bad.trec:1: expected 6 columns" in proc.stderr
    proc = harness("fuse", "--run", str(runs / "a.trec"), "-o", str(out))
    assert proc.returncode == 2 and proc.stderr.strip() == "error: fusion needs at least two --run files, got 1"
    assert not out.exists()


def test_optimize_writes_the_chosen_values_and_refuses_the_test_split(runs):
    (runs / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td4\t1\nq\td1\t0\n")
    out = runs / "fused.trec"
    base = ["fuse", "--method", "wsum", "--run", str(runs / "a.trec"), "--run", str(runs / "b.trec"), "-o", str(out),
            "--optimize", "--metric", "NDCG@3"]
    proc = harness(*base, "--qrels", str(runs / "dev.tsv"))
    assert proc.returncode == 0, proc.stderr
    # worked out in tests/fusion/test_worked_examples.py: weights (0.3, 0.7), NDCG@3 = 1/log2(3)
    assert f"weights=[0.3, 0.7]  NDCG@3 = {1 / math.log2(3):.6f} (11 trials)" in proc.stdout
    doc = json.loads((runs / "fused.trec.json").read_text())
    opt = doc["optimization"]
    assert opt["chosen"] == {"weights": [0.3, 0.7]} and opt["split"] == "dev" and opt["metric"] == "NDCG@3"
    assert opt["score"] == pytest.approx(1 / math.log2(3)) and len(opt["trials"]) == 11
    assert doc["fusion"]["weights"] == [0.3, 0.7] and opt["qrels"]["path"] == str(runs / "dev.tsv")
    # the fused run uses the chosen weights: d2 = 0.3*0.5 + 0.7, d4 = 0.35, d1 = 0.3, d3 = 0
    assert [line.split()[2] for line in out.read_text().splitlines()] == ["d2", "d4", "d1", "d3"]

    (runs / "test.tsv").write_text((runs / "dev.tsv").read_text())
    out.unlink()
    for extra in ([], ["--split", "dev"]):
        proc = harness(*base, "--qrels", str(runs / "test.tsv"), *extra)
        assert proc.returncode == 2 and "refusing to optimise fusion on the test split" in proc.stderr
    proc = harness(*base, "--qrels", str(runs / "dev.tsv"), "--split", "test")
    assert proc.returncode == 2 and not out.exists()
    proc = harness(*base, "--qrels", str(runs / "test.tsv"), "--allow-test-split")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((runs / "fused.trec.json").read_text())["optimization"]["split"] == "test"


def test_scifact_bm25_pair_fused_by_rrf_and_evaluated(tmp_path):
    """Real data: BM25 (k1 0.9, b 0.4) and BM25 (k1 1.2, b 0.75) on SciFact, RRF k=60, evaluated."""
    ndcg = {}
    for name, params in (("bm25", []), ("bm25-k1.2-b0.75", ["-p", "k1=1.2", "-p", "b=0.75"])):
        proc = harness("run", "--retriever", "bm25", *params, "--name", name, "--k", "10,100", "--quiet",
                       "--output-dir", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        ndcg[name] = json.loads((tmp_path / "scifact" / name / "metrics.json").read_text())["metrics"]["NDCG@10"]
    runs = [tmp_path / "scifact" / name / "run.trec" for name in ndcg]
    out = tmp_path / "fused.trec"
    proc = harness("fuse", "--method", "rrf", "--run", str(runs[0]), "--run", str(runs[1]), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    qrels = BUNDLED / "scifact/qrels/test.tsv"
    proc = harness("evaluate", "--qrels", str(qrels), "--run", str(out), "--k", "10,100", "--json", str(tmp_path / "m.json"))
    assert proc.returncode == 0, proc.stderr
    fused = json.loads((tmp_path / "m.json").read_text())["metrics"]["NDCG@10"]
    # The values docs/fusion.md reports (this harness, SciFact test, 300 queries), to 4 decimals
    assert ndcg == pytest.approx({"bm25": 0.678909, "bm25-k1.2-b0.75": 0.682575}, abs=1e-4)
    assert fused == pytest.approx(0.677440, abs=1e-4)
    # the CLI's file equals the library's fusion of the same runs
    api = evaluate(fuse([read_run(r) for r in runs], "rrf"), read_qrels(qrels), ["NDCG@10"], [10])
    assert api.means["NDCG@10"] == fused


def test_identical_ids_are_dropped_before_fusing_unless_kept(tmp_path):
    """The query's own id (d2 is query "d2" here) is dropped from the inputs as the evaluator drops it,
    so --depth 2 keeps two documents that count: RRF over a = d2, d1, d3 and b = d3, d2, d4 without d2
    gives d1 1/61 + 0, d3 1/62 + 1/61, d4 1/62: top 2 = d3, d1. Kept, d2 (1/61 + 1/62) would take a slot
    and the evaluated run would hold one document (d3) instead of two."""
    (tmp_path / "a.trec").write_text("d2 Q0 d2 1 3.0 a\nd2 Q0 d1 2 2.0 a\nd2 Q0 d3 3 1.0 a\n")
    (tmp_path / "b.trec").write_text("d2 Q0 d3 1 3.0 b\nd2 Q0 d2 2 2.0 b\nd2 Q0 d4 3 1.0 b\n")
    base = ["fuse", "--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec"), "--depth", "2"]
    proc = harness(*base, "-o", str(tmp_path / "f.trec"), "--json", str(tmp_path / "f.json"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "f.trec").read_text() == (f"d2 Q0 d3 1 {1 / 62 + 1 / 61!r} rrf\n"
                                                  f"d2 Q0 d1 2 {1 / 61!r} rrf\n")
    assert json.loads((tmp_path / "f.json").read_text())["identical_ids"] == "dropped"
    proc = harness(*base, "-o", str(tmp_path / "k.trec"), "--keep-identical-ids")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "k.trec").read_text() == (f"d2 Q0 d2 1 {1 / 61 + 1 / 62!r} rrf\n"
                                                  f"d2 Q0 d3 2 {1 / 63 + 1 / 61!r} rrf\n")


def test_python_fuse_has_the_cli_defaults(tmp_path):
    """``harness.fusion.fuse`` with its defaults gives the run ``harness fuse`` writes with its own:
    identical ids dropped before fusing and the cut in trec_eval-9 order. Inputs: the identical-id
    case above (RRF at depth 2: d3 1/62 + 1/61, d1 1/61) and the float32 tie of
    tests/fusion/test_depth_cut_order.py (CombSUM of a 0.5, b 0.5 and a 0.50000001, b 0.5 at depth 1:
    b, which trec_eval 9 ranks first). Before, fuse() kept d2 (d2, d3) and cut in double order (a)."""
    (tmp_path / "a.trec").write_text("d2 Q0 d2 1 3.0 a\nd2 Q0 d1 2 2.0 a\nd2 Q0 d3 3 1.0 a\n"
                                     "q Q0 a 1 0.5 a\nq Q0 b 2 0.5 a\n")
    (tmp_path / "b.trec").write_text("d2 Q0 d3 1 3.0 b\nd2 Q0 d2 2 2.0 b\nd2 Q0 d4 3 1.0 b\n"
                                     "q Q0 a 1 0.50000001 b\nq Q0 b 2 0.5 b\n")
    runs = [read_run(tmp_path / "a.trec"), read_run(tmp_path / "b.trec")]
    # CombSUM at depth 1 without d2: d3 1.0 + 3.0 beats d1 2.0 and d4 1.0; q: b (the float32 tie)
    for method, norm, depth, expected in (("rrf", None, 2, {"d2": ["d3", "d1"], "q": ["b", "a"]}),
                                          ("combsum", "none", 1, {"d2": ["d3"], "q": ["b"]})):
        args = ["--method", method, "--depth", str(depth)] + (["--norm", norm] if norm else [])
        proc = harness("fuse", "--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec"), *args,
                       "-o", str(tmp_path / f"{method}.trec"))
        assert proc.returncode == 0, proc.stderr
        cli = read_run(tmp_path / f"{method}.trec").to_dict()
        api = fuse(runs, method, norm, depth=depth).to_dict()
        assert api == cli
        assert {q: list(docs) for q, docs in api.items()} == expected


@pytest.mark.skipif(__import__("shutil").which("bash") is None, reason="process substitution needs bash")
def test_a_piped_run_is_hashed_from_the_bytes_read(tmp_path):
    # `harness fuse --run <(zcat a.gz)` recorded the sha256 of nothing (e3b0c442...): the checksum read the
    # pipe after the parse had emptied it (found by the second formats review). Expected: the file's own hash.
    import hashlib
    import json as json_module
    import subprocess
    import sys

    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q1 Q0 x 1 2.0 s\nq1 Q0 y 2 1.0 s\n")
    b.write_text("q1 Q0 y 1 2.0 s\nq1 Q0 x 2 1.0 s\n")
    command = (f"{sys.executable} -m harness fuse --run <(cat {a}) --run {b} -o {tmp_path / 'f.trec'} "
               f"--json {tmp_path / 'f.json'}")
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    runs = json_module.loads((tmp_path / "f.json").read_text())["runs"]
    assert [r["sha256"] for r in runs] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b)]


def test_a_plain_fusion_removes_an_earlier_optimisations_settings_beside_its_output(runs):
    # `fuse --optimize` writes OUT.json; a later plain `fuse -o OUT` replaced OUT and left that file beside it,
    # describing another run (an rrf k optimisation's settings beside a combsum run; session review)
    (runs / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td4\t1\nq\td1\t0\n")
    out, side = runs / "fused.trec", runs / "fused.trec.json"
    pair = ["--run", str(runs / "a.trec"), "--run", str(runs / "b.trec"), "-o", str(out)]
    assert harness("fuse", *pair, "--optimize", "--qrels", str(runs / "dev.tsv")).returncode == 0
    assert json.loads(side.read_text())["fusion"]["method"] == "rrf"
    proc = harness("fuse", "--method", "combsum", *pair)
    assert proc.returncode == 0, proc.stderr
    assert not side.exists() and f"removed {side}: the settings of an earlier fusion into {out}" in proc.stderr
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"combsum"}
    side.write_text('{"a user\'s": "file"}')  # a file of another shape is the user's: kept
    assert harness("fuse", "--method", "combsum", *pair).returncode == 0 and side.exists()


def test_runs_holding_different_queries_are_fused_with_a_warning(tmp_path):
    # ranx's fuse refuses runs whose queries differ; here each query is fused over the runs holding it
    # (docs/fusion.md) and the user is told (session 15 fusion review: runs of two splits fused silently).
    (tmp_path / "a.trec").write_text(RUN_A + "r Q0 d1 1 1.0 a\n")
    (tmp_path / "b.trec").write_text(RUN_B)
    (tmp_path / "c.trec").write_text("x Q0 d1 1 1.0 c\n")
    out = tmp_path / "f.trec"
    proc = harness("fuse", "--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"warning: the runs hold different queries ({tmp_path / 'a.trec'} 2, {tmp_path / 'b.trec'} 1; 1 of 2 in every "
        "run): a query is fused over the runs that hold it, a run without it adds nothing"]
    assert out.read_text().splitlines()[-1] == f"r Q0 d1 1 {1 / 61!r} rrf"  # r: a's rank 1 alone
    proc = harness("fuse", "--run", str(tmp_path / "b.trec"), "--run", str(tmp_path / "c.trec"), "-o", str(out))
    assert "no query is in every run (runs of different datasets or splits?)" in proc.stderr
    proc = harness("fuse", "--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "a.trec"), "-o", str(out))
    assert proc.returncode == 0 and proc.stderr == ""  # the same queries: nothing to say
