"""compare and check name results computed by builds that compute different numbers (harness.compare.provenance).

The case: NDCG_exp of float grades below 1 was 0.0 before 9be498f for a perfect ranking (2^rel - 1 as
exp2(rel) - 1 cancelled to 0 for grades 1e-17 and 2e-17), 1.0 after. 0.0 is what the evaluator of
9be498f^ gives on the run below (checked by running that commit's harness.evaluation on it: 0.0 for
each of the 8 queries, NDCG@10 1.0), 1.0 is the definition (a perfect ranking). A baseline computed by
the old build read as IMPROVED (+1.0000, p = 0.0078) against today's, with no word of why; every
metrics.json written before this change records no ``numbers_version``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from harness.compare import align, load_system
from harness.compare.provenance import numbers_version, numbers_warnings
from harness.versions import NUMBERS_VERSION
from tests.compare.helpers import write_result

ROOT = Path(__file__).resolve().parents[2]


def _tiny_grades(folder: Path) -> tuple[Path, Path]:
    """8 queries, each with two documents judged 2e-17 and 1e-17, ranked in that order (perfect)."""
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = folder / "qrels.txt", folder / "run.trec"
    qrels.write_text("".join(f"q{i} 0 d{i}a 2e-17\nq{i} 0 d{i}b 1e-17\n" for i in range(8)))
    run.write_text("".join(f"q{i} Q0 d{i}a 1 2.0 x\nq{i} Q0 d{i}b 2 1.0 x\nq{i} Q0 z{i} 3 0.5 x\n" for i in range(8)))
    return qrels, run


def _evaluate(harness_cli, qrels: Path, run: Path, out: Path):
    proc = harness_cli("evaluate", "--qrels", qrels, "--run", run, "--k", "10", "-m", "NDCG_exp@10",
                       "--relevance-threshold", "1e-17", "--json", out)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _as_the_old_build_wrote_it(document: dict) -> dict:
    """The same result as the build before 9be498f wrote it: NDCG_exp@10 0.0 per query, and ``versions``
    without the build (release, python and libraries only)."""
    old = json.loads(json.dumps(document))
    for row in old["per_query"].values():
        row["NDCG_exp@10"] = 0.0
    old["metrics"]["NDCG_exp@10"] = 0.0
    old["versions"] = {k: v for k, v in old["versions"].items()
                       if k not in ("numbers_version", "runs_version", "git")}
    return old


def _warnings(stderr: str) -> list[str]:
    # (not the near-alpha warning of a test drawn with --permutations 10: tests/compare/test_compare_near_alpha.py)
    return [line for line in stderr.splitlines() if line.startswith("warning:") and "random draws" not in line]


def test_a_baseline_of_an_older_build_is_named_with_both_versions_and_the_command_that_recomputes_it(
        tmp_path, harness_cli):
    qrels, run = _tiny_grades(tmp_path)
    new = _evaluate(harness_cli, qrels, run, tmp_path / "new.json")
    assert new["metrics"]["NDCG_exp@10"] == 1.0  # (a perfect ranking)
    assert new["versions"]["numbers_version"] == NUMBERS_VERSION
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(_as_the_old_build_wrote_it(new)))

    proc = harness_cli("check", "--baseline", old_path, "--current", tmp_path / "new.json", "-m", "NDCG_exp@10")
    assert proc.returncode == 0, proc.stderr
    assert "IMPROVED  NDCG_exp@10  0.0000 -> 1.0000" in proc.stdout  # (the numbers are still compared)
    lines = _warnings(proc.stdout + proc.stderr)
    assert len(lines) == 1, lines
    line = lines[0]
    assert f"baseline ({old_path}) NUMBERS_VERSION unknown" in line
    assert f"current ({tmp_path / 'new.json'}) NUMBERS_VERSION {NUMBERS_VERSION}" in line
    assert "not by the systems" in line
    # the command it gives recomputes the baseline with this build: then the gate agrees, with no warning
    command = shlex.split(line.split(f"(NUMBERS_VERSION {NUMBERS_VERSION}): ", 1)[1].split(" (its recorded run", 1)[0])
    assert command[:2] == ["harness", "evaluate"]
    assert command[command.index("--run") + 1] == str(run)
    assert command[command.index("--qrels") + 1] == str(qrels)
    recomputed = tmp_path / "old.recomputed.json"
    assert command[-2:] == ["--json", str(recomputed)]
    assert harness_cli(*command[1:]).returncode == 0
    assert json.loads(recomputed.read_text())["per_query"] == new["per_query"]
    proc = harness_cli("check", "--baseline", recomputed, "--current", tmp_path / "new.json", "-m", "NDCG_exp@10")
    assert proc.returncode == 0 and "OK        NDCG_exp@10  1.0000 -> 1.0000" in proc.stdout
    assert _warnings(proc.stdout + proc.stderr) == []


def test_compare_prints_the_warning_once_on_stderr_and_same_versions_say_nothing(tmp_path, harness_cli):
    qrels, run = _tiny_grades(tmp_path)
    new = _evaluate(harness_cli, qrels, run, tmp_path / "new.json")
    again = _evaluate(harness_cli, qrels, run, tmp_path / "again.json")
    proc = harness_cli("compare", tmp_path / "new.json", tmp_path / "again.json", "-m", "NDCG_exp@10",
                       "--permutations", "10", "--resamples", "10")
    assert proc.returncode == 0 and _warnings(proc.stderr) == []  # (one build: no warning)
    older = {**_as_the_old_build_wrote_it(new), "versions": {**again["versions"], "numbers_version": 1}}
    (tmp_path / "older.json").write_text(json.dumps(older))
    proc = harness_cli("compare", tmp_path / "new.json", tmp_path / "older.json", "-m", "NDCG_exp@10",
                       "--permutations", "10", "--resamples", "10")
    assert proc.returncode == 0
    lines = _warnings(proc.stderr)
    assert len(lines) == 1 and f"older ({tmp_path / 'older.json'}) NUMBERS_VERSION 1 (retrieval-harness" in lines[0]
    assert "recompute older with this build" in lines[0] and "recompute new" not in lines[0]


def test_a_result_without_a_run_is_told_to_run_again_and_unknown_against_unknown_warns(tmp_path):
    a = write_result(tmp_path / "a", {"q1": {"M": 0.1}, "q2": {"M": 0.2}}, versions={"python": "3.11.7"})
    b = write_result(tmp_path / "b", {"q1": {"M": 0.3}, "q2": {"M": 0.2}}, versions={"python": "3.11.7"})
    systems = [load_system(str(a)), load_system(str(b))]
    assert [numbers_version(s) for s in systems] == [None, None]
    (warning,) = numbers_warnings(systems)
    assert "a (" in warning and "b (" in warning and warning.count("NUMBERS_VERSION unknown") == 2
    assert "recompute a with this build" in warning and "run it again" in warning
    assert [w for w in align(systems, ["M"]).warnings if "NUMBERS_VERSION" in w] == [warning]


def test_a_run_file_is_evaluated_by_this_build(tmp_path):
    qrels, run = _tiny_grades(tmp_path)
    current = write_result(tmp_path / "cur", {f"q{i}": {"NDCG_exp@10": 1.0} for i in range(8)})
    old = write_result(tmp_path / "old", {f"q{i}": {"NDCG_exp@10": 0.0} for i in range(8)}, versions={})
    from_file = load_system(str(run), qrels=qrels, metrics=["NDCG_exp@10"], relevance_threshold=1e-17)
    assert numbers_version(from_file) == NUMBERS_VERSION
    assert numbers_warnings([load_system(str(current)), from_file]) == []
    assert len(numbers_warnings([load_system(str(old)), from_file])) == 1


def test_the_committed_baseline_records_this_builds_numbers_version(tmp_path):
    """CI gates on results/baselines/scifact/bm25: a baseline of another NUMBERS_VERSION (or none) warns in
    every CI run. Its values are this build's: a harness run of it and a harness evaluate of its run.trec
    reproduce all 300 x 30 per-query values exactly (2026-11-27). Bumping NUMBERS_VERSION means recomputing
    it."""
    baseline = load_system(str(ROOT / "results" / "baselines" / "scifact" / "bm25"))
    assert numbers_version(baseline) == NUMBERS_VERSION
    current = write_result(tmp_path / "current", baseline.document.per_query)
    assert numbers_warnings([baseline, load_system(str(current))]) == []


def test_a_bench_cell_of_the_build_before_versions_held_it_is_known_by_its_bench_numbers(tmp_path):
    """Bench cells recorded NUMBERS_VERSION as bench.numbers before metrics.json's versions held it
    (harness.bench.cells.is_finished reuses them on it): such a cell is of that version, not unknown."""
    cell = write_result(tmp_path / "cell", {"q1": {"M": 0.1}, "q2": {"M": 0.2}}, versions={"python": "3.11.7"})
    doc = json.loads((cell / "metrics.json").read_text())
    (cell / "metrics.json").write_text(json.dumps({**doc, "bench": {"numbers": NUMBERS_VERSION}}))
    current = write_result(tmp_path / "cur", {"q1": {"M": 0.1}, "q2": {"M": 0.2}})
    assert numbers_version(load_system(str(cell))) == NUMBERS_VERSION
    assert numbers_warnings([load_system(str(cell)), load_system(str(current))]) == []
