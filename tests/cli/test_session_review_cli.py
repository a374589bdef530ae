"""Fresh-eyes review of the CLI's refusals of outputs over inputs (harness/cli/run.py).

``harness run`` refuses result files that are the run-file retriever's input, but compared them with
``Path(value)`` while the retriever opens ``os.path.expanduser(path)``: ``-p path=~/...`` (quoted, or
from a pipeline TOML, where no shell expands it) named the result folder's own run.trec, was not
recognised, and the user's run was replaced by its top --depth documents, exit 0.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli.test_cli_review2 import files, harness, snapshot  # noqa: F401  (the fixture)


@pytest.mark.parametrize("how", ["param", "pipeline"])
def test_run_refuses_a_tilde_path_to_its_own_run_file(files, monkeypatch, capsys, how):  # noqa: F811
    monkeypatch.setenv("HOME", str(files))
    victim = files / "results" / "ds" / "rf" / "run.trec"
    victim.parent.mkdir(parents=True)
    victim.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d2 1 1.0 a\nq2 Q0 d3 2 0.5 a\n")
    before = snapshot(files)
    (files / "p.toml").write_text('[[stages]]\nname = "r"\ntype = "retrieve"\nretriever = "run-file"\n'
                                  'params = { path = "~/results/ds/rf/run.trec" }\n')
    args = ["-r", "run-file", "-p", "path=~/results/ds/rf/run.trec"] if how == "param" else ["--pipeline", "p.toml"]
    code, out, err = harness(monkeypatch, capsys, "run", "-d", "ds", "-o", "results", "--name", "rf", "--k", "1", *args)
    assert (code, out) == (2, "")  # (was: 0, 'results written to results/ds/rf', the run cut to its top 1)
    assert err == (f"error: --output-dir results/ds/rf/run.trec: is the input file {victim}; writing there would "
                   "replace it\n")
    assert {k: v for k, v in snapshot(files).items() if k != "p.toml"} == before


@pytest.mark.parametrize("command", ["evaluate", "check", "compare"])
def test_json_dash_is_utf8_whatever_the_encoding_of_stdout(files, monkeypatch, capsys, command):  # noqa: F811
    """``--json -`` wrote the JSON as text in stdout's encoding: under a non-UTF-8 locale (here latin-1)
    query id ``qé`` became byte 0xe9, exit 0, and ``harness compare`` could not read the file back
    ("'utf-8' codec can't decode byte 0xe9"). Expected: the bytes ``--json FILE`` writes, UTF-8."""
    import io
    import json

    (files / "uq.txt").write_text("qé 0 d1 1\nq2 0 d3 1\n")
    (files / "u1.trec").write_text("qé Q0 d1 1 2.0 a\nq2 Q0 d3 1 1.0 a\n")
    (files / "u2.trec").write_text("qé Q0 d2 1 2.0 b\nq2 Q0 d3 1 1.0 b\n")
    for name in ("é1", "é2"):
        (files / name).mkdir()
        assert harness(monkeypatch, capsys, "evaluate", "--qrels", "uq.txt", "--run", f"u{name[-1]}.trec",
                       "--json", f"{name}/metrics.json")[0] == 0
    args = {"evaluate": ["evaluate", "--qrels", "uq.txt", "--run", "u1.trec"],
            "check": ["check", "--baseline", "é1", "--current", "é2", "--tolerance", "1"],
            "compare": ["compare", "é1", "é2"]}[command]
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    monkeypatch.setattr("sys.stdout", stdout)
    code, _, err = harness(monkeypatch, capsys, *args, "--json", "-")
    assert code == 0, err
    stdout.flush()
    data = stdout.buffer.getvalue()
    document = json.loads(data.decode("utf-8"))  # (was: UnicodeDecodeError, byte 0xe9)
    assert "é".encode() in data
    if command == "evaluate":
        assert document["per_query"]["qé"]["NDCG@10"] == 1.0  # qé's d1 judged 1 ranked first


@pytest.mark.parametrize("args", [
    ["evaluate", "--qrels", "{qrels}", "--run", "{run}", "--markdown", "-"],
    ["fuse", "--run", "{run}", "--run", "{run2}", "-o", "-"],
    ["fuse", "--run", "{run}", "--run", "{run2}", "-o", "{out}", "--json", "-"],
], ids=["evaluate --markdown", "fuse -o", "fuse --json"])
def test_a_dash_output_where_it_is_no_stdout_is_refused(tmp_path, args):
    # (was: a file literally named "-" written in the working folder, exit 0, where --json - of
    # evaluate, check and compare writes to stdout)
    (tmp_path / "qrels.tsv").write_text("q1\t0\td1\t1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    (tmp_path / "r2.trec").write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n")
    names = {"qrels": tmp_path / "qrels.tsv", "run": tmp_path / "r.trec", "run2": tmp_path / "r2.trec",
             "out": tmp_path / "f.trec"}
    proc = subprocess.run([sys.executable, "-m", "harness", *[a.format(**names) for a in args]], capture_output=True,
                          text=True, cwd=tmp_path)
    assert (proc.returncode, proc.stderr.strip().splitlines()[-1]) == (
        2, "error: an output named - would be a file named '-': only --json of evaluate, check and compare writes "
           "to stdout; give a file name"), proc.stderr
    assert not (tmp_path / "-").exists()


def test_an_input_that_names_no_path_is_no_error_when_outputs_are_checked(tmp_path):
    # a string param holding NUL (a pipeline TOML's "a\u0000b") made os.path.samefile raise ValueError, a
    # traceback, once the result files existed (bench review): such a string is no file, so nothing to refuse
    from pathlib import Path

    from harness.cli.options import refuse_outputs_over_inputs

    out = tmp_path / "run.trec"
    out.write_text("")
    refuse_outputs_over_inputs([("--output-dir", out)], [Path("a\0b")])
