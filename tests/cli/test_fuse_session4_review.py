"""Fresh-eyes review of dd4be6e (fuse removes an earlier fusion's OUTPUT.json): fails without its fix."""

from __future__ import annotations

import json

from tests.cli.test_cli import harness

RUN_A = "q Q0 d1 1 3.0 a\nq Q0 d2 2 2.0 a\nq Q0 d3 3 1.0 a\n"
RUN_B = "q Q0 d2 1 4.0 b\nq Q0 d4 2 2.0 b\nq Q0 d3 3 0.0 b\n"


def test_the_settings_of_another_output_named_like_output_json_are_kept(tmp_path):
    # `fuse -o other.trec --json fused.trec.json` writes the settings of other.trec (their "output" names it);
    # a later plain `fuse -o fused.trec` removed them ("removed ...: the settings of an earlier fusion into
    # fused.trec", which they never were) while other.trec, which they describe, is still there.
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    pair = ["--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec")]
    other, side = tmp_path / "other.trec", tmp_path / "fused.trec.json"
    assert harness("fuse", *pair, "-o", str(other), "--json", str(side)).returncode == 0
    proc = harness("fuse", "--method", "combsum", *pair, "-o", str(tmp_path / "fused.trec"))
    assert proc.returncode == 0, proc.stderr
    assert side.exists() and json.loads(side.read_text())["output"] == str(other)
    assert "removed" not in proc.stderr
