"""What ``harness bench`` tells the user about its cells' warnings (helper s20benchwarn).

Before: ``harness run`` printed each warning of its result (metrics.json ``warnings``) as a ``warning: ...``
line, but ``harness bench`` printed none of its cells' (they sat in each cell's metrics.json, the
leaderboard looked clean), and the http retriever's failed-queries line came in the middle of the cells,
naming no cell. Expected (docs/bench.md): after the cells and tables, one ``warning: <cells>: <warning>``
line per distinct warning, naming the cells that have it (past three: the first three and a count), for
run and reused cells alike, none for a clean cell; ``-q`` as ``harness run -q``: only the http retriever's
line. The leaderboard (md and json) carries them too; no fingerprint changes (cells are reused).

The worked example: a 4-document corpus (d1..d4, tests/bench/bench_helpers.py) copied as two datasets,
``tiny`` and ``tiny2``; a ``run-file`` retriever whose run returns ``zz`` (in no corpus) for q1, so each of
its two cells has harness's foreign-documents warning, word for word the same (1 id, 'zz', query 'q1');
BM25 on the same datasets: no warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import _register, app
from tests.retrievers.http_fakes import FakeEngine

from .bench_helpers import write_tiny

REPO = Path(__file__).resolve().parents[2]

FOREIGN = ("1 document id(s) returned by 'run-file' are not in the corpus (first: 'zz' for query 'q1'); they count "
           "as retrieved and not relevant")
GROUPED = f"warning: tiny / rf, tiny2 / rf: {FOREIGN}"


def _config(tmp_path: Path, extra: str = "") -> Path:
    write_tiny(tmp_path / "tiny")
    write_tiny(tmp_path / "tiny2")
    (tmp_path / "rf.trec").write_text("q1 Q0 d2 1 3.0 x\nq1 Q0 zz 2 2.0 x\nq2 Q0 d4 1 1.0 x\n")
    config = tmp_path / "b.toml"
    config.write_text(f'name = "w"\noutput_dir = "{tmp_path / "results"}"\nk = [1, 3]\nmetrics = ["NDCG@3"]\n'
                      f'datasets = ["{tmp_path / "tiny"}", "{tmp_path / "tiny2"}"]\n'
                      '[[retrievers]]\ntype = "bm25"\n'
                      '[[retrievers]]\ntype = "run-file"\nlabel = "rf"\n'
                      f'params = {{ path = "{tmp_path / "rf.trec"}" }}\n'
                      + extra)
    return config


def _bench(config: Path, *args: str, env: dict | None = None):
    _register(["bench"])
    result = CliRunner().invoke(app, ["bench", str(config), *args], env={"COLUMNS": "400", **(env or {})})
    assert result.exit_code == 0, result.output
    return result


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning:")]


def test_each_cells_warning_is_printed_once_after_the_cells_naming_them(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    result = _bench(_config(tmp_path))
    assert _warnings(result.stderr) == [GROUPED]  # the two rf cells' identical warning: one line; bm25's: none
    lines = result.output.splitlines()  # (stdout and stderr as a terminal shows them)
    cell_lines = [i for i, line in enumerate(lines) if line.startswith("[")]
    assert len(cell_lines) == 4
    at = lines.index(GROUPED)
    assert at > max(cell_lines) and lines[at + 1].startswith("bench w: 4 cells (4 run, 0 reused, 0 failed)")
    # the same fact, recorded where it was already: each rf cell's metrics.json
    for label in ("tiny", "tiny2"):
        assert json.loads((tmp_path / f"results/w/{label}/rf/metrics.json").read_text())["warnings"] == [FOREIGN]
        assert "warnings" not in json.loads((tmp_path / f"results/w/{label}/bm25/metrics.json").read_text())


def test_a_reused_cells_warning_is_printed_on_the_second_bench(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    config = _config(tmp_path)
    first = _bench(config)
    second = _bench(config)
    assert "4 cells (0 run, 4 reused, 0 failed)" in second.stdout  # (nothing reran for it)
    assert _warnings(second.stderr) == _warnings(first.stderr) == [GROUPED]
    dry = _bench(config, "--dry-run")  # the finished cells' warnings: a dry run reads them too
    assert _warnings(dry.stderr) == [GROUPED]


def test_quiet_prints_no_metrics_json_warning_as_run_q(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    result = _bench(_config(tmp_path), "-q")
    assert _warnings(result.stderr) == []  # harness run -q prints no metrics.json warning either
    assert result.stdout.startswith("bench w: 4 cells (4 run, 0 reused, 0 failed)")


def test_the_leaderboard_carries_the_cells_warnings(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _bench(_config(tmp_path))
    md = (tmp_path / "results/w/leaderboard.md").read_text()
    assert md.endswith(f"\n> {GROUPED}\n")
    board = json.loads((tmp_path / "results/w/leaderboard.json").read_text())
    manifest = json.loads((tmp_path / "results/w/bench.json").read_text())
    for cells in (board["cells"], manifest["cells"]):
        assert {(c["dataset"], c["retriever"]): c.get("warnings") for c in cells} == {
            ("tiny", "bm25"): None, ("tiny", "rf"): [FOREIGN], ("tiny2", "bm25"): None, ("tiny2", "rf"): [FOREIGN]}


def test_identical_warnings_of_many_cells_are_one_line():
    from harness.bench.leaderboard import grouped_warnings  # (here: the other tests run on the old code too)

    named = [(f"d{i} / bm25", ["depth 5 is below the largest cutoff 10", f"only d{i}"]) for i in range(1, 6)]
    named.append(("d6 / bm25", []))
    assert grouped_warnings(named) == [
        "d1 / bm25, d2 / bm25, d3 / bm25 and 2 more cells: depth 5 is below the largest cutoff 10",
        "d1 / bm25: only d1", "d2 / bm25: only d2", "d3 / bm25: only d3", "d4 / bm25: only d4", "d5 / bm25: only d5"]
    assert grouped_warnings([("a / x", ["w"]), ("b / x", ["w"]), ("c / x", ["w"]), ("d / x", ["w"])]) == [
        "a / x, b / x, c / x and 1 more cell: w"]
    assert grouped_warnings([("a / x", ["w", "w"])]) == ["a / x: w"]


HTTP = ("http retriever: 1 of 2 queries failed and have empty rankings (on_failure=empty; causes in metrics.json "
        "retriever_stats.failures): q2")


def _answer(request, n):
    """q2 fails (HTTP 500); q1 gets d2 then d3, scored by its text's length: tiny's and tiny2's answers differ, so
    each http cell runs on each bench (an http cell is reused when its answers' sha256 is the one recorded)."""
    if request.query["id"] == "q2":
        return 500, {}
    return 200, {"hits": [{"id": "d2", "score": float(len(request.query["q"]))}, {"id": "d3", "score": 0.5}]}


def test_an_http_cells_failed_queries_are_named_after_the_cells_and_kept_under_quiet(tmp_path):
    """Through the console entry point (its warning filters): the http line once, after the cells, naming the
    cell (before: in the middle of the cells' lines, naming none); under -q too, as harness run -q prints it."""
    config = _config(tmp_path)
    (tmp_path / "tiny2/queries.jsonl").write_text('{"_id": "q1", "text": "banana cherry banana"}\n'
                                                  '{"_id": "q2", "text": "fig"}\n')
    with FakeEngine(_answer) as engine:
        config.write_text(config.read_text() + '[[retrievers]]\ntype = "http"\nlabel = "svc"\n'
                          f'params = {{ url = "{engine.url}", preset = "harness", on_failure = "empty", '
                          'retries = 0 }\n')
        runs = [subprocess.run([sys.executable, "-m", "harness", "bench", str(config), *args], capture_output=True,
                               text=True, cwd=REPO, env={**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")},
                               timeout=300) for args in ((), ("-q",))]
    loud, quiet = runs
    assert loud.returncode == quiet.returncode == 0, loud.stderr + quiet.stderr
    # (in the order first met, cells in config order: tiny / rf's, then tiny / svc's)
    assert _warnings(loud.stderr) == [GROUPED, f"warning: tiny / svc, tiny2 / svc: {HTTP}"]
    assert loud.stdout.rindex("[6/6] tiny2 / svc: run") < loud.stdout.index("bench w: 6 cells (6 run, 0 reused")
    assert _warnings(quiet.stderr) == [f"warning: tiny / svc, tiny2 / svc: {HTTP}"]
    assert quiet.stdout.startswith("bench w: 6 cells (2 run, 4 reused, 0 failed)")
    assert loud.stderr.count("http retriever:") == 1  # (not also a line of its own during the cells, naming none)


def test_a_reused_cells_failed_requests_are_said_from_its_metrics_json(tmp_path, monkeypatch):
    """A reused http cell (metrics.json records retriever_stats.failed_queries and efficiency's failed count,
    not the issued line): its failed requests are a warning too, in the leaderboard's words, also under -q."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    config = _config(tmp_path)
    _bench(config)
    path = tmp_path / "results/w/tiny/bm25/metrics.json"
    doc = json.loads(path.read_text())
    doc["efficiency"]["latency_ms"]["failed"] = 1  # (as an http cell's, keeping its fingerprint: still finished)
    path.write_text(json.dumps(doc))
    line = "warning: tiny / bm25: 1 requests failed (scored 0; metrics.json retriever_stats.failed_queries)"
    second = _bench(config)
    assert "4 cells (0 run, 4 reused, 0 failed)" in second.stdout
    assert _warnings(second.stderr) == [line, GROUPED]
    assert _warnings(_bench(config, "-q").stderr) == [line]


def test_a_ray_tasks_issued_warning_comes_back_to_the_driver(ray_local, tmp_path, monkeypatch):
    """Under the Ray executor the http cell runs in a worker (whose own stderr the driver's user does not see;
    log_to_driver is off here): its failed-queries line comes back with the task's result, naming the cell."""
    from harness.bench import load_config, run_bench

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    config = _config(tmp_path)
    (tmp_path / "tiny2/queries.jsonl").write_text('{"_id": "q1", "text": "banana cherry banana"}\n'
                                                  '{"_id": "q2", "text": "fig"}\n')
    with FakeEngine(_answer) as engine:
        config.write_text(config.read_text().replace("[[retrievers]]", '[executor]\nkind = "ray"\n[[retrievers]]', 1)
                          + f'[[retrievers]]\ntype = "http"\nlabel = "svc"\nparams = {{ url = "{engine.url}", '
                            'preset = "harness", on_failure = "empty", retries = 0 }\n')
        result = run_bench(load_config(config))
    assert [o.status for o in result.outcomes] == ["run"] * 6
    assert {o.cell.name: o.issued for o in result.outcomes if o.issued} == {"tiny / svc": [HTTP], "tiny2 / svc": [HTTP]}
    assert result.warnings() == [GROUPED[len("warning: "):], f"tiny / svc, tiny2 / svc: {HTTP}"]
    assert result.warnings(issued_only=True) == [f"tiny / svc, tiny2 / svc: {HTTP}"]


def test_an_http_cell_runs_on_every_bench_even_when_its_answers_are_the_last_datasets(tmp_path, monkeypatch):
    """docs/bench.md: an http cell runs again on every bench. One retriever instance serves every dataset and its
    params() hold the digest of its last answers: the plan of tiny2's cell was made with tiny's answers, and with
    the same queries answered alike (tiny2 a copy of tiny), tiny2's cell was reused without asking the service
    (before: 2 requests on the second bench, '1 run'; now 4, both cells run)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    write_tiny(tmp_path / "tiny")
    write_tiny(tmp_path / "tiny2")
    config = tmp_path / "b.toml"
    with FakeEngine(lambda request, n: (200, {"hits": [{"id": "d2", "score": 2.0}, {"id": "d3", "score": 1.0}]})) \
            as engine:
        config.write_text(f'name = "w"\noutput_dir = "{tmp_path / "results"}"\nk = [1, 3]\nmetrics = ["NDCG@3"]\n'
                          f'datasets = ["{tmp_path / "tiny"}", "{tmp_path / "tiny2"}"]\n'
                          '[[retrievers]]\ntype = "bm25"\n[[retrievers]]\ntype = "http"\nlabel = "svc"\n'
                          f'params = {{ url = "{engine.url}", preset = "harness", retries = 0 }}\n')
        first = _bench(config)
        asked = len(engine.received)
        second = _bench(config)
        again = len(engine.received) - asked
    assert asked == 4 and "4 cells (4 run, 0 reused, 0 failed)" in first.stdout  # (2 datasets x 2 queries)
    assert again == 4, second.stdout
    assert "4 cells (2 run, 2 reused, 0 failed)" in second.stdout  # (the bm25 cells reused, both http cells run)
