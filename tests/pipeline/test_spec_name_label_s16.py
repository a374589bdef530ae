"""A pipeline table with both ``name`` and ``label`` is refused (one line naming the file and the key).

Both name the same thing (a standalone file's result folder, a bench pipeline's column): ``label`` was
taken and ``name`` ignored without a word, so ``name = "mine"`` with ``label = "other"`` wrote
``results/scifact/other/`` (and ``name = 3`` beside a label was not even type-checked).
"""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.pipeline import parse_pipeline
from tests.cli.test_cli import harness

STAGE = {"name": "bm25", "type": "retrieve", "retriever": "bm25"}
MESSAGE = ("name: give the pipeline's name or its label, not both (they name the same thing: its result "
           "folder, its leaderboard column)")


def test_name_and_label_together_are_refused():
    with pytest.raises(ConfigError) as raised:
        parse_pipeline({"name": "mine", "label": "other", "stages": [STAGE]}, "p.toml", check_components=False)
    assert str(raised.value) == f"p.toml: {MESSAGE}"
    with pytest.raises(ConfigError) as raised:
        parse_pipeline({"name": 3, "label": "other", "stages": [STAGE]}, "b.toml", "pipelines[0]",
                       check_components=False)
    assert str(raised.value) == f"b.toml: pipelines[0].{MESSAGE}"


def test_either_alone_names_the_pipeline():
    assert parse_pipeline({"name": "mine", "stages": [STAGE]}, check_components=False).name == "mine"
    assert parse_pipeline({"label": "other", "stages": [STAGE]}, check_components=False).name == "other"
    assert parse_pipeline({"stages": [STAGE]}, default_name="file", check_components=False).name == "file"


def test_cli_one_line_nothing_written(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "mine"\nlabel = "other"\n\n[[stages]]\nname = "bm25"\ntype = "retrieve"\n'
                    'retriever = "bm25"\n')
    proc = harness("run", "--pipeline", str(path), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {path}:1: {MESSAGE}"], proc.stderr  # (line 1: name)
    assert not (tmp_path / "out").exists()
