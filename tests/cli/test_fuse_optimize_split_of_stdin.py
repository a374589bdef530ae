"""``harness fuse --optimize`` reads the split of ``--qrels`` from its file name (``test.tsv`` is refused
without ``--allow-test-split``); standard input (``--qrels -``) and a pipe (``<(zcat dev.tsv.gz)``,
``/dev/fd/63``) have no such name (harness/cli/fuse.py ``_named_split``).

Before, ``cat test.tsv | harness fuse --optimize --qrels -`` tuned RRF's k on the test judgments, exit 0,
and recorded ``"split": "-"`` (a pipe: ``"split": "63"``): the test-split guard read a split from a name
that is none. Now ``--split`` is required for them (exit 2, one line), and the split given is the one
checked and recorded.

Oracle: the same judgments read from a file named ``dev.tsv`` give the same optimisation (chosen k and
score) as from standard input with ``--split dev``. Worked values: query q1 judges d1 relevant; run a
ranks d1, d2, d3 and run b d3, d1, d2, so d1's RRF score 1/(k+1) + 1/(k+2) is above d3's 1/(k+1) + 1/(k+3)
and d2's 1/(k+2) + 1/(k+3) for every k: d1 first, NDCG@10 = 1 on each trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

QRELS = b"q1 0 d1 1\nq1 0 d2 0\n"
RUN_A = b"q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\n"
RUN_B = b"q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq1 Q0 d2 3 1.0 b\n"


def harness(*args, stdin: bytes = b"", timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], input=stdin, capture_output=True,
                          timeout=timeout)


def _fuse(folder, *qrels_args, stdin: bytes = b"", timeout: float = 120):
    (folder / "a.trec").write_bytes(RUN_A)
    (folder / "b.trec").write_bytes(RUN_B)
    return harness("fuse", "--run", folder / "a.trec", "--run", folder / "b.trec", "-o", folder / "fused.trec",
                   "--optimize", "--k-grid", "10,60", *qrels_args, stdin=stdin, timeout=timeout)


def test_qrels_from_stdin_without_split_is_refused(tmp_path):
    proc = _fuse(tmp_path, "--qrels", "-", stdin=QRELS)  # (the bytes of a test.tsv)
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.decode().strip().splitlines()
    assert lines == ["error: --qrels -: standard input or a pipe has no file name to read the split from; "
                     "name it with --split (e.g. --split dev)"]
    assert not (tmp_path / "fused.trec").exists() and not (tmp_path / "fused.trec.json").exists()


def test_qrels_from_stdin_named_test_is_refused(tmp_path):
    proc = _fuse(tmp_path, "--qrels", "-", "--split", "test", stdin=QRELS)
    assert proc.returncode == 2
    assert b"refusing to optimise fusion on the test split" in proc.stderr
    assert not (tmp_path / "fused.trec").exists()


def test_qrels_from_stdin_with_split_is_recorded_with_it_and_matches_the_file(tmp_path):
    from_stdin = tmp_path / "stdin"
    from_file = tmp_path / "file"
    from_stdin.mkdir()
    from_file.mkdir()
    proc = _fuse(from_stdin, "--qrels", "-", "--split", "dev", stdin=QRELS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().startswith("optimised on dev (<stdin>): k=")
    (from_file / "dev.tsv").write_bytes(QRELS)
    oracle = _fuse(from_file, "--qrels", from_file / "dev.tsv")
    assert oracle.returncode == 0, oracle.stderr
    got = json.loads((from_stdin / "fused.trec.json").read_text())["optimization"]
    want = json.loads((from_file / "fused.trec.json").read_text())["optimization"]
    assert got["split"] == want["split"] == "dev"
    assert got["qrels"]["path"] == "<stdin>"
    assert (got["chosen"], got["score"], got["trials"]) == (want["chosen"], want["score"], want["trials"])
    assert got["score"] == 1.0
    assert (from_stdin / "fused.trec").read_bytes() == (from_file / "fused.trec").read_bytes()


def test_qrels_from_a_pipe_without_split_is_refused_and_with_it_read(tmp_path):
    fifo = tmp_path / "qrels.fifo"
    os.mkfifo(fifo)
    # (refused before the pipe is opened: no writer needed; one that waited for a writer would time out)
    proc = _fuse(tmp_path, "--qrels", fifo, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == (f"error: --qrels {fifo}: standard input or a pipe has no file name to "
                                            "read the split from; name it with --split (e.g. --split dev)")

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(QRELS)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    proc = _fuse(tmp_path, "--qrels", fifo, "--split", "dev")
    writer.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "fused.trec.json").read_text())["optimization"]["split"] == "dev"
