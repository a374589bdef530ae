"""Bad user input through the CLI (review): each mistake is one line naming the file (and line / id
where they apply), exit code 2, nothing written, no traceback. Run in-process through ``main`` (the
console script's entry point) to stay fast."""

from __future__ import annotations

import json
import sys

import pytest

from harness.cli import main


def harness(monkeypatch, capsys, *args) -> tuple[int, str]:
    """(exit code, stderr) of ``harness ARGS``."""
    monkeypatch.setattr(sys, "argv", ["harness", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A tiny BEIR folder, a TREC run pair and qrels, in the working folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    docs = {"d1": "apple banana", "d2": "banana split", "d3": "cherry pie"}
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                          for d, t in docs.items()))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "apple"}\n{"_id": "q2", "text": "pie"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d2 1 1.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d2 1 2.0 b\nq2 Q0 d3 1 1.0 b\n")
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"id": d, "vector": {w: 1.5 for w in t.split()}}) + "\n"
                                                 for d, t in docs.items()))
    (tmp_path / "qv.jsonl").write_text('{"id": "q1", "vector": {"apple": 1}}\n{"id": "q2", "vector": {"pie": 1}}\n')
    return tmp_path


def test_download_refuses_a_name_that_is_a_path_and_leaves_the_folder_alone(files, monkeypatch, capsys):
    # The name became <cache>/datasets/<name>: an absolute path (or ../x) unpacked over that folder
    # and deleted what it held (the old folder is renamed aside and removed).
    victim = files / "victim"
    victim.mkdir()
    (victim / "notes.txt").write_text("precious")
    for name in (victim, "../x", "..", ".downloads"):
        code, err = harness(monkeypatch, capsys, "datasets", "download", name, "--url", "http://127.0.0.1:9/x.zip",
                            "--sha256", "0" * 64, "--no-progress")
        assert code == 2
        assert err.splitlines() == [f"error: {str(name)!r} cannot name a downloaded dataset (its folder is "
                                    f"{files / 'cache' / 'datasets'}/NAME): use letters, digits and . _ + = - "
                                    "(starting with a letter or digit)"]
    assert (victim / "notes.txt").read_text() == "precious"


def test_download_refuses_a_malformed_sha256_before_any_transfer(files, monkeypatch, capsys):
    code, err = harness(monkeypatch, capsys, "datasets", "download", "mine", "--url", "http://127.0.0.1:9/x.zip",
                        "--sha256", "zz", "--no-progress")
    assert (code, err.splitlines()) == (2, ["error: --sha256 takes 64 hexadecimal digits, got 'zz'"])


def test_toml_that_is_not_utf8_names_the_file_line_and_column(files, monkeypatch, capsys):
    (files / "b.toml").write_bytes(b'name = "b"\nk = [1]\ndescription = "caf\xe9"\n')  # Latin-1
    code, err = harness(monkeypatch, capsys, "bench", "b.toml")
    assert (code, err.splitlines()) == (2, ["error: b.toml: not valid UTF-8 (byte 0xe9 at line 3, column 19)"])
    code, err = harness(monkeypatch, capsys, "run", "--pipeline", "b.toml", "--dataset", "ds")
    assert (code, err.splitlines()) == (2, ["error: b.toml: not valid UTF-8 (byte 0xe9 at line 3, column 19)"])


def test_tilde_user_that_does_not_exist_is_a_missing_path_not_a_traceback(files, monkeypatch, capsys):
    # Path("~nobody").expanduser() raises RuntimeError; os.path.expanduser leaves it as it is.
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "~no-such-user-xyz/ds", "-q")
    assert (code, err.splitlines()) == (2, [
        "error: unknown dataset '~no-such-user-xyz/ds': not a folder, not bundled (scifact), not downloaded, "
        "and not a registered BEIR dataset (see `harness datasets list`)"])
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "-r", "run-file", "-p",
                        "path=~no-such-user-xyz/r.trec", "-q")
    assert (code, err.splitlines()) == (2, ["error: run file not found: ~no-such-user-xyz/r.trec"])


def test_an_output_that_cannot_be_written_is_refused_before_the_first_output(files, monkeypatch, capsys):
    # fuse wrote the fused run, then failed on --json (a folder): exit 2 with the run left behind,
    # and the message named the atomic write's temporary file instead of the user's path.
    (files / "settings").mkdir()
    code, err = harness(monkeypatch, capsys, "fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec",
                        "--json", "settings")
    assert (code, err.splitlines()) == (2, ["error: settings: Is a directory"])
    assert not (files / "f.trec").exists()
    code, err = harness(monkeypatch, capsys, "evaluate", "--qrels", "qrels.txt", "--run", "a.trec",
                        "--json", "m.json", "--markdown", "settings")
    assert (code, err.splitlines()) == (2, ["error: settings: Is a directory"])
    assert not (files / "m.json").exists()


def test_run_name_must_stay_inside_the_dataset_folder(files, monkeypatch, capsys):
    for name in ("", ".", "..", "../x"):
        code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "-o", "out", "--name", name, "-q")
        assert (code, err.splitlines()) == (2, [f"error: --name names the result folder inside out/<dataset>/; "
                                                f"got {name!r}"])
    assert not (files / "out").exists()


def test_depth_and_rrf_k_past_int64_are_refused(files, monkeypatch, capsys):
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "-o", "out", "--depth", 2**70, "-q")
    assert code == 2 and "--depth must be >= 1 and at most 2^63 - 1" in err and "Traceback" not in err
    code, err = harness(monkeypatch, capsys, "fuse", "--run", "a.trec", "--run", "b.trec", "-o", "f.trec",
                        "--optimize", "--qrels", "qrels.txt", "--split", "dev", "--k-grid", f"10,{2**70}")
    assert (code, err.splitlines()) == (2, [f"error: --k-grid takes values up to 2^63 - 1, got {2**70}"])
    assert not (files / "f.trec").exists()


def test_impacts_quantize_overflow_and_surrogate_terms(files, monkeypatch, capsys):
    base = ["run", "--dataset", "ds", "-r", "impacts", "-p", "documents=docs.jsonl", "-p", "queries=qv.jsonl",
            "-o", "out", "-q"]
    # JSON reads 1e400 as inf, which quantize's annotation (int | str | None) does not take: the text
    # as typed is passed on (harness.params.command_line_params), and refused as no scale
    code, err = harness(monkeypatch, capsys, *base, "-p", "quantize=1e400")
    assert (code, err.splitlines()) == (2, ["error: quantize must be a positive integer scale (e.g. 100) or none, "
                                            "got '1e400'"])
    # a scale past float32's 3.4e38 (or one that takes a weight past it): every score was inf and the
    # ranking by document id, exit 0
    code, err = harness(monkeypatch, capsys, *base, "-p", f"quantize={10**39}")
    assert (code, err.splitlines()) == (2, [f"error: quantize must be a positive integer scale (e.g. 100) or none, "
                                            f"got {10**39}"])
    code, err = harness(monkeypatch, capsys, *base, "-p", f"quantize={3 * 10**38}")  # 1.5 * 3e38 > 3.4e38
    assert (code, err.splitlines()) == (2, [f"error: quantize {3 * 10**38} makes a term weight overflow float32 "
                                            "(|quantize * w| > 3.403e+38); use a smaller scale"])
    (files / "docs.jsonl").write_text('{"id": "d1", "vector": {"\\ud800": 1}}\n')
    code, err = harness(monkeypatch, capsys, *base)
    assert (code, err.splitlines()) == (2, ["error: docs.jsonl:1: a term holds a lone surrogate escape "
                                            "(\\ud800-\\udfff): not valid Unicode text (id 'd1')"])
    assert not (files / "out").exists()


def test_pipeline_reranker_parameter_is_named_as_a_reranker_parameter(files, monkeypatch, capsys):
    (files / "p.toml").write_text('[[stages]]\nname = "rf"\ntype = "retrieve"\nretriever = "run-file"\n'
                                  'params = { path = "a.trec" }\n\n[[stages]]\nname = "ce"\ntype = "rerank"\n'
                                  'input = "rf"\nreranker = "cross-encoder"\nparams = { modle = "x" }\n')
    code, err = harness(monkeypatch, capsys, "run", "--pipeline", "p.toml", "--dataset", "ds")
    assert code == 2
    assert err.splitlines()[0].startswith('error: p.toml:12: stages[1].params.modle: unknown parameter for reranker '
                                          '"cross-encoder" (it takes: ')


@pytest.mark.parametrize("retriever", [["-r", "bm25"], ["-r", "run-file", "-p", "path=a.trec"]])
def test_the_largest_depth_is_searched_as_the_whole_run(files, monkeypatch, capsys, retriever):
    """--depth 2^63 - 1 is accepted (as --k is); one more was searched (for the dropped identical id),
    2^63, which overflowed int64 (OverflowError traceback). The values equal the default depth's."""
    values = []
    for depth in ([], ["--depth", 2**63 - 1]):
        code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", *retriever, "-o", "out", "-q", *depth)
        assert (code, err) == (0, "")
        name = retriever[1]
        values.append(json.loads((files / "out" / "ds" / name / "metrics.json").read_text())["metrics"])
    assert values[0] == values[1] and values[0]["NDCG@10"] > 0


def test_a_cache_dir_under_an_unknown_user_is_a_path_not_a_traceback(files, monkeypatch, capsys):
    """HARNESS_CACHE_DIR=~nouser/x: Path.expanduser raised RuntimeError (a traceback); the path is now
    taken as written (os.path.expanduser leaves it), a folder under the working folder."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", "~no-such-user-here/x")
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "-o", "out", "-q", "-p", "cache=true")
    assert (code, err) == (0, "")
    assert (files / "~no-such-user-here" / "x" / "bm25").is_dir()


def test_a_depth_below_a_cutoff_is_warned_about(files, monkeypatch, capsys):
    """--depth 1 with Recall@2 asked for: Recall@2 is computed on the top 1 document (the value of
    Recall@1 under another name); said on stderr and in metrics.json's warnings. No warning when the
    depth covers every cutoff (the default depth is the largest cutoff)."""
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "--k", "1", "-m", "Recall@2", "--depth", 1,
                        "-o", "out")
    expected = ("depth 1 is below the largest cutoff 2: values at cutoffs past 1 (Recall@2) are computed on the "
                "top 1 documents only")
    assert code == 0 and f"warning: {expected}" in err.splitlines()
    document = json.loads((files / "out" / "ds" / "bm25" / "metrics.json").read_text())
    assert document["warnings"] == [expected]
    code, err = harness(monkeypatch, capsys, "run", "--dataset", "ds", "--k", "1", "-m", "Recall@2", "-o", "out")
    assert code == 0 and "warning" not in err
    assert "warnings" not in json.loads((files / "out" / "ds" / "bm25" / "metrics.json").read_text())


def test_a_dataset_folder_name_that_is_not_utf8_is_refused_before_indexing(tmp_path):
    # `harness run --dataset $'bad\xff'` indexed and searched, then failed writing metrics.json / run.trec
    # ("'utf-8' codec can't encode character '\udcff'") and left an empty result folder (efficiency review)
    import os
    import subprocess
    import sys

    from tests.bench.bench_helpers import write_tiny

    from pathlib import Path

    folder = write_tiny(Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff")))
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(folder), "-o", str(tmp_path / "out"), "-q"],
                          capture_output=True, text=True, errors="backslashreplace")
    assert (proc.returncode, proc.stderr.splitlines()) == (2, [
        "error: the dataset's name 'bad\\udcff' is not UTF-8 text (its folder name holds bytes that are not): "
        "metrics.json and run.trec could not hold it; rename the folder"])
    assert not (tmp_path / "out").exists()
