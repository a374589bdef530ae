"""End to end through the installed entry point: `harness run` and `harness evaluate`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.datasets import BUNDLED


def harness(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def scifact_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    proc = harness("run", "--retriever", "bm25", "--param", "backend=rank-bm25", "--k", "1,10,100",
                   "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    return out / "scifact" / "bm25", proc


def test_run_writes_the_result_folder(scifact_result):
    folder, proc = scifact_result
    assert "NDCG" in proc.stdout and "results written to" in proc.stdout
    doc = json.loads((folder / "metrics.json").read_text())
    assert doc["schema"] == "retrieval-harness/metrics/v1"
    assert doc["dataset"]["name"] == "scifact" and doc["n_queries"] == 300
    assert set(doc["timings"]) == {"load_s", "index_s", "search_s", "evaluate_s"}
    # BM25 (Porter, Lucene stopwords, k1=0.9 b=0.4) lands near Anserini's flat 0.6789 (REFERENCE_SCORES.md).
    assert 0.66 < doc["metrics"]["NDCG@10"] < 0.70
    assert len(doc["per_query"]) == 300
    lines = (folder / "per_query.jsonl").read_text().splitlines()
    assert len(lines) == 300 and json.loads(lines[0])["query"]
    assert "| NDCG |" in (folder / "metrics.md").read_text()
    lines = (folder / "run.trec").read_text().splitlines()
    assert lines[0] == "# ir_metadata.start"  # the header (docs/efficiency.md), then the ranking
    first = next(line for line in lines if not line.startswith("#")).split()
    assert first[1] == "Q0" and first[3] == "1"


def test_evaluate_reproduces_run_metrics_from_the_run_file(scifact_result, tmp_path):
    folder, _ = scifact_result
    out = tmp_path / "m.json"
    proc = harness("evaluate", "--qrels", str(BUNDLED / "scifact/qrels/test.tsv"), "--run", str(folder / "run.trec"),
                   "--k", "1,10,100", "--json", str(out), "--markdown", str(tmp_path / "m.md"))
    assert proc.returncode == 0, proc.stderr
    expected = json.loads((folder / "metrics.json").read_text())
    assert json.loads(out.read_text())["metrics"] == expected["metrics"]  # exact, full precision
    assert (tmp_path / "m.md").exists()


def test_bad_run_file_exits_2_with_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "bad.trec").write_text("1 Q0 d1 1 0.5 x\n1 Q0 d2 2 oops x\n")
    proc = harness("evaluate", "--qrels", str(BUNDLED / "scifact/qrels/test.tsv"), "--run", str(tmp_path / "bad.trec"),
                   "--json", str(tmp_path / "out.json"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'bad.trec'}:2: score 'oops' is not a number (id 'd2')"]
    assert not (tmp_path / "out.json").exists()


def test_an_output_path_that_cannot_be_written_is_one_line_and_exit_2(tmp_path):
    # An output under a regular file: the OSError used to end in typer's traceback, exit 1 (which
    # `harness check` uses for a regression).
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 t\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "afile").write_text("")
    proc = harness("evaluate", "--qrels", str(tmp_path / "qrels"), "--run", str(tmp_path / "run.trec"),
                   "--json", str(tmp_path / "afile" / "m.json"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'afile'}: Not a directory"]  # (checked first)


def test_bad_dataset_folder_exits_2(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{broken\n')
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    proc = harness("run", "--dataset", str(tmp_path / "ds"), "--output-dir", str(tmp_path / "out"))
    assert proc.returncode == 2 and "corpus.jsonl:2: malformed JSON" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_help_does_not_import_torch():
    code = "import sys, harness.cli as c; c._register(); import retrievers.bm25; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_the_command_line_puts_openblas_threads_to_sleep_before_numpy_starts_them():
    """``harness`` sets OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles of spinning instead of 2^28, ~0.1 s of a
    core per process) before any command module imports numpy, and keeps a value the user set."""
    import os

    code = ("import os, sys; import harness.cli as c; had = 'numpy' in sys.modules; "
            "sys.argv = ['harness', 'evaluate', '--help']; import atexit; "
            "atexit.register(lambda: print(had, 'numpy' in sys.modules, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))); "
            "c.main()")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split()[-3:] == ["False", "True", "4"], out.stderr[-1000:]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**env, "OPENBLAS_THREAD_TIMEOUT": "20"})
    assert out.stdout.split()[-1] == "20"


def test_a_command_imports_only_its_own_module_and_help_lists_them_all():
    # Startup: `harness evaluate` does not import run/bench/serve/... (their dependencies cost seconds
    # together); with no command (or --help) every command is registered, in the documented order.
    from harness.cli import COMMANDS

    code = ("import sys, harness.cli as c; c._register(['evaluate', '--help']); "
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.rsplit('.', 1)[0] == 'harness.cli' "
            "and m.rsplit('.', 1)[1] in c.COMMANDS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    assert out == ["['evaluate']"]
    proc = harness("--help")
    listed = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("│ ") and len(line.split()) > 2
              and line.split()[1] in COMMANDS]
    assert proc.returncode == 0 and sorted(listed) == sorted(COMMANDS)


def test_a_run_file_replayed_at_a_smaller_depth_scores_as_evaluate_scores_the_file(tmp_path):
    # d1 (not relevant) and d2 (relevant) tie in float32 (1.00000001 -> 1.0): trec_eval 9, the default
    # semantics, ranks d2 (larger id) first, so P@1 is 1 for evaluate; the replay cut to depth 1 keeps d2 too.
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": d}) + "\n" for d in ("d1", "d2", "d3")))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    run = tmp_path / "sys.trec"
    run.write_text("q1 Q0 d1 1 1.00000001 s\nq1 Q0 d2 2 1.0 s\nq1 Q0 d3 3 0.5 s\n")
    replay = harness("run", "-d", str(folder), "-r", "run-file", "-p", f"path={run}", "--k", "1", "-o",
                     str(tmp_path / "out"), "--quiet")
    assert replay.returncode == 0, replay.stderr
    direct = harness("evaluate", "--qrels", str(folder / "qrels/test.tsv"), "--run", str(run), "--k", "1",
                     "--json", str(tmp_path / "direct.json"))
    assert direct.returncode == 0, direct.stderr
    replayed = json.loads((tmp_path / "out/tiny/run-file/metrics.json").read_text())["metrics"]
    assert replayed == json.loads((tmp_path / "direct.json").read_text())["metrics"]
    assert replayed["P@1"] == 1.0
