"""The command line as a whole (second review): outputs that would replace inputs or each other,
tables cut in pipes, an option refused only after the indexing, and options that had no effect.

Each case ran with exit 0 (or a traceback) before; now it is one ``error:`` (or usage) message, exit 2,
and nothing written. Run in-process through ``main`` (the console script's entry point) to stay fast.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from harness.cli import main
from harness.reranker import Reranker


def harness(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``harness ARGS``."""
    monkeypatch.setattr(sys, "argv", ["harness", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


class ByRow(Reranker):
    """Score = minus the document's corpus row (deterministic, no model)."""

    name = "by-row"

    def score(self, candidates, queries, corpus):
        return -candidates.doc_rows.astype(np.float64)


@pytest.fixture
def files(tmp_path, monkeypatch, capsys):
    """Qrels, two runs, a tiny BEIR folder, and the metrics.json of each run (``harness evaluate --json``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "{d}", "title": "", "text": "t"}}\n' for d in ("d1", "d2", "d3")))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d2 1 1.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d2 1 2.0 b\nq2 Q0 d3 1 1.0 b\n")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        code, _, err = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", f"{name}.trec",
                               "--json", f"{name}/metrics.json")
        assert code == 0, err
    return tmp_path


def snapshot(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("args, option, victim", [
    # check, compare and report wrote their --json / --junit / --markdown / -o over the result they read
    (["check", "--baseline", "a", "--current", "b", "--json", "b/metrics.json"], "--json", "b/metrics.json"),
    (["check", "--baseline", "a", "--current", "b", "--junit", "a/metrics.json"], "--junit", "a/metrics.json"),
    (["check", "--baseline", "a", "--current", "b", "--qrels", "qrels.txt", "--json", "qrels.txt"], "--json",
     "qrels.txt"),
    (["compare", "a", "b", "--json", "b/metrics.json"], "--json", "b/metrics.json"),
    (["compare", "a.trec", "b.trec", "--qrels", "qrels.txt", "-m", "P@1", "--markdown", "a.trec"], "--markdown",
     "a.trec"),
    (["compare", "a.trec", "b.trec", "--qrels", "qrels.txt", "-m", "P@1", "--markdown", "qrels.txt"], "--markdown",
     "qrels.txt"),
    (["report", "a", "b", "-o", "a/metrics.json"], "--output", "a/metrics.json"),
    # rerank replaced its first-stage run with the reranked one
    (["rerank", "-d", "ds", "--run", "a.trec", "-r", f"{__name__}:ByRow", "-o", "a.trec", "-q"], "--output",
     "a.trec"),
])
def test_an_output_that_is_an_input_is_refused(files, monkeypatch, capsys, args, option, victim):
    before = snapshot(files)
    code, out, err = harness(monkeypatch, capsys, *args)
    assert (code, err) == (2, f"error: {option} {victim}: is the input file {victim}; writing there would replace it\n")
    assert out == "" and snapshot(files) == before


@pytest.mark.parametrize("args, first, second", [
    (["evaluate", "--qrels", "qrels.txt", "--run", "a.trec"], "--json", "--markdown"),
    (["compare", "a", "b"], "--json", "--markdown"),
    (["check", "--baseline", "a", "--current", "b"], "--json", "--junit"),
])
def test_two_outputs_in_one_file_are_refused(files, monkeypatch, capsys, args, first, second):
    # (before: exit 0, the second output replaced the first: --json m.json --markdown m.json left Markdown)
    code, _, err = harness(monkeypatch, capsys, *args, first, "same.out", second, "./same.out")
    assert (code, err) == (2, f"error: {first} same.out and {second} same.out name the same file; "
                              "one would replace the other\n")
    assert not (files / "same.out").exists()


def test_tables_in_a_pipe_keep_every_number(files, monkeypatch, capsys):
    # rich squeezed a table into 80 columns when stdout is not a terminal (CI logs, `| grep`, `> out`):
    # with 15 cutoffs every cell read "0…"; with 8 (1,3,5,10,20,50,100,1000) SciFact's NDCG@50 read "0.70…".
    ks = list(range(1, 16))
    code, out, _ = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", "a.trec",
                           "--k", ",".join(map(str, ks)))
    assert code == 0 and "…" not in out
    # worked example: q1 finds its one relevant document at rank 1, q2 none: P@k = (1/k + 0) / 2
    p_row = next(line for line in out.splitlines() if line.startswith("│ P "))
    assert [c.strip() for c in p_row.split("│")[2:-1]] == [f"{0.5 / k:.4f}" for k in ks]
    # several runs, one with a long name of wide characters (two columns each)
    wide = files / ("運行結果" * 6 + ".trec")
    wide.write_text((files / "b.trec").read_text())
    code, out, _ = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", "a.trec", "--run",
                           wide.name, "--k", "1,3,5,10,20,50,100,1000")
    assert code == 0 and "…" not in out and wide.name in out
    row = next(line for line in out.splitlines() if wide.name in line)
    # worked example, b.trec: q2's relevant document at rank 1, q1's not retrieved: 0.5 at every cutoff
    # (P@k: (0 + 1/k) / 2); columns in the table's order, each family at every cutoff
    cutoffs = (1, 3, 5, 10, 20, 50, 100, 1000)
    expected = [f"{(0.5 / k if family == 'P' else 0.5):.4f}"
                for family in ("NDCG", "MAP", "Recall", "P", "R_cap", "MRR") for k in cutoffs]
    assert [c.strip() for c in row.split("│")[2:-1]] == expected
    code, out, _ = harness(monkeypatch, capsys, "datasets", "list")
    assert code == 0 and "…" not in out and "train,dev,test" in out


def test_serve_refuses_an_unknown_log_level_before_indexing(files, monkeypatch, capsys):
    import harness.serving as serving

    def bind(*_):  # (the log level was read by uvicorn after the indexing: KeyError traceback, exit 1)
        raise AssertionError("the log level is checked before the port is bound")

    monkeypatch.setattr(serving, "bind", bind)
    code, out, err = harness(monkeypatch, capsys, "serve", "-d", "ds", "--port", "0", "--log-level", "foo")
    message = " ".join(err.replace("│", " ").split())
    assert code == 2 and "--log-level must be one of critical, error, warning, info, debug, trace, got 'foo'" in message
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("args, message", [
    # check: --latency-metric without --latency-tolerance gated no latency at all, and passed
    (["check", "--baseline", "a", "--current", "b", "--latency-metric", "p99"],
     "error: --latency-metric applies only with --latency-tolerance (the latency gate)"),
    # fuse: the settings of --optimize without it
    (["fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec", "--metric", "P@5", "--k-grid", "10"],
     "error: --metric, --k-grid: used only with --optimize (which is not given)"),
    (["fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec", "--relevance-threshold", "2"],
     "error: --relevance-threshold: used only with --optimize (which is not given)"),
    # ... an empty --k-grid tried the default grid, --step is no rrf setting, --k-grid no wsum one
    (["fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec", "--optimize", "--qrels", "qrels.txt",
      "--k-grid", ""], "error: --k-grid takes comma-separated integers, e.g. 10,20,50; got ''"),
    (["fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec", "--optimize", "--qrels", "qrels.txt",
      "--step", "0.5"], "error: --step does not apply to --optimize of rrf, which tunes its k"),
    (["fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec", "--optimize", "--qrels", "qrels.txt",
      "--method", "wsum", "--k-grid", "1,2"], "error: --k-grid does not apply to --optimize of wsum, which tunes its "
                                              "weights"),
    # datasets download: --mirror with --url was ignored (the zip came from --url)
    (["datasets", "download", "newds", "--url", "http://127.0.0.1:9/x.zip", "--sha256", "0" * 64, "--mirror",
      "http://127.0.0.1:9", "--no-progress"], "error: --mirror does not apply with --url (the zip is fetched from "
                                              "the --url given)"),
    # bench: --address without the ray executor ran every cell here
    (["bench", "b.toml", "--address", "auto"], "error: --address auto: used only with --executor ray (the executor "
                                               "is local)"),
])
def test_an_option_that_would_have_no_effect_is_refused(files, monkeypatch, capsys, args, message):
    (files / "b.toml").write_text('name = "x"\nk = [1]\nmetrics = ["P@1"]\n[[datasets]]\nname = "ds"\n'
                                  '[[retrievers]]\ntype = "bm25"\n')
    before = snapshot(files)
    code, out, err = harness(monkeypatch, capsys, *args)
    assert (code, err) == (2, message + "\n")
    assert out == "" and snapshot(files) == before


@pytest.mark.parametrize("args, message", [
    (["rerank", "--evaluate", "-q"], "--evaluate prints a table and --quiet prints only the output path"),
    (["rerank", "--k", "10"], "--k: used only with --evaluate"),
    (["rerank", "-m", "AP", "--relevance-threshold", "2"], "--metric, --relevance-threshold: used only with"),
    (["run", "--pipeline", "p.toml", "-r", "bm25"], "--retriever does not apply with --pipeline"),
])
def test_options_that_the_command_ignored_are_usage_errors(files, monkeypatch, capsys, args, message):
    (files / "p.toml").write_text('name = "p"\n[[stages]]\nname = "r"\ntype = "retrieve"\nretriever = "bm25"\n')
    if args[0] == "rerank":
        args = [*args, "-d", "ds", "--run", "a.trec", "-r", f"{__name__}:ByRow", "-o", "r.trec"]
    else:
        args = [*args, "-d", "ds", "-o", "results"]
    before = snapshot(files)
    code, out, err = harness(monkeypatch, capsys, *args)
    assert code == 2 and message in " ".join(err.replace("│", " ").split()), err
    assert "Traceback" not in err and out == "" and snapshot(files) == before


def test_json_dash_is_stdout_for_evaluate_check_and_compare(files, monkeypatch, capsys):
    # `--json -` wrote a file named "-", and stdout (`| jq`) got the table: it is now the JSON alone,
    # the table or report going to stderr
    import json

    code, out, err = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", "a.trec", "--json", "-")
    document = json.loads(out)  # worked example: q1's relevant document at rank 1, q2's not retrieved
    assert code == 0 and document["metrics"]["NDCG@10"] == 0.5 and document["per_query"]["q1"]["P@1"] == 1.0
    assert "a.trec: 2 queries" in err
    code, out, err = harness(monkeypatch, capsys, "check", "--baseline", "a", "--current", "b", "--json", "-")
    assert code == 0 and json.loads(out)["schema"] == "retrieval-harness/check/v1" and "PASSED" in err
    code, out, err = harness(monkeypatch, capsys, "compare", "a", "b", "-m", "P@1", "--json", "-")
    assert code == 0 and json.loads(out)["schema"] == "retrieval-harness/compare/v1" and "## Comparison" in err
    code, _, err = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", "a.trec", "--run",
                           "b.trec", "--json", "-")
    assert (code, err) == (2, "error: --json -: several runs write one metrics.json each; give a folder\n")
    assert not (files / "-").exists()


def test_version(monkeypatch, capsys):
    # (was: "No such option: --version", exit 2)
    from harness import __version__

    assert harness(monkeypatch, capsys, "--version") == (0, f"retrieval-harness {__version__}\n", "")


def test_an_output_folder_under_a_file_is_refused_before_any_work(files, monkeypatch, capsys):
    # (run searched, then failed to write; bench printed a failed cell with NotADirectoryError's text)
    (files / "b.toml").write_text('name = "x"\nk = [1]\nmetrics = ["P@1"]\n[[datasets]]\npath = "ds"\n'
                                  '[[retrievers]]\ntype = "bm25"\n')
    code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "a.trec/results")
    assert (code, out, err) == (2, "", "error: --output-dir a.trec/results: a.trec is not a folder\n")
    code, out, err = harness(monkeypatch, capsys, "bench", "b.toml", "-o", "a.trec")
    assert (code, out, err) == (2, "", "error: --output-dir a.trec/x: a.trec is not a folder\n")
    assert not (files / "cache" / "bm25").exists()


def test_run_refuses_to_write_its_result_over_the_run_file_it_replays(files, monkeypatch, capsys):
    # re-evaluating a result folder's run with other cutoffs (-r run-file -p path=<its run.trec> --name
    # <its name>) replaced the user's run with its top --depth documents (here: the top 1), exit 0
    victim = files / "results" / "ds" / "rf" / "run.trec"
    victim.parent.mkdir(parents=True)
    victim.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d2 1 1.0 a\nq2 Q0 d3 2 0.5 a\n")
    before = snapshot(files)
    (files / "p.toml").write_text('[[stages]]\nname = "r"\ntype = "retrieve"\nretriever = "run-file"\n'
                                  'params = { path = "results/ds/rf/run.trec" }\n')
    for how in (["-r", "run-file", "-p", "path=results/ds/rf/run.trec"], ["--pipeline", "p.toml"]):
        code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "results", "--name", "rf", "--k", "1",
                                 *how)
        assert (code, out) == (2, "") and err == ("error: --output-dir results/ds/rf/run.trec: is the input file "
                                                  "results/ds/rf/run.trec; writing there would replace it\n")
        assert {k: v for k, v in snapshot(files).items() if k != "p.toml"} == before
    code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "results", "--name", "rf2", "--k", "1",
                             "-r", "run-file", "-p", "path=results/ds/rf/run.trec", "-q")
    assert (code, out) == (0, "results written to results/ds/rf2\n"), err


def test_an_output_that_cannot_be_created_is_named_not_its_temporary_file():
    # `--json /sys/x.json` said "error: /sys/.x.json.<pid>-<host>.<random>.tmp: Permission denied"
    import errno
    from pathlib import Path

    from harness.atomic import temporary_path
    from harness.cli import os_error_line

    tmp = temporary_path(Path("/ro/out dir/m é.json"))
    assert os_error_line(PermissionError(errno.EACCES, "Permission denied", str(tmp))) == \
        "/ro/out dir/m é.json: Permission denied"
    other = "/ro/.m.json.1-otherhost.0123456789ab.tmp"  # another process's: named as it is
    assert os_error_line(FileNotFoundError(errno.ENOENT, "No such file or directory", other)) == \
        f"{other}: No such file or directory"
