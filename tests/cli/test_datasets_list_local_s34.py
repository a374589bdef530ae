"""``harness datasets list``'s "local" column: what is on this machine, forum by forum.

It said "downloaded" for SciFact once a copy was downloaded, though runs read the bundled copy (the
downloaded one only for a split the bundled copy has no qrels of), and nothing for CQADupStack's
forums, downloaded or not.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.datasets import app
from harness.datasets import download as dl

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _local_column(output: str, name: str) -> str:
    line = next(line for line in output.splitlines() if f" {name} " in line)
    return line.split("│")[-2].strip()


def test_local_column(cache):
    result = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert _local_column(result.output, "scifact") == "bundled"
    assert _local_column(result.output, "cqadupstack/android") == ""
    assert _local_column(result.output, "nfcorpus") == ""

    (cache / "datasets" / "scifact").mkdir(parents=True)
    (cache / "datasets" / "scifact" / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    root = cache / "datasets" / "cqadupstack"
    (root / "android").mkdir(parents=True)
    (root / "android" / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (root / "DOWNLOAD.json").write_text(json.dumps({"url": "u", "bytes": 1, "sha256": "s", "downloaded_at": "d"}))
    result = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert _local_column(result.output, "scifact") == "bundled + downloaded"
    assert _local_column(result.output, "cqadupstack") == "downloaded"
    assert _local_column(result.output, "cqadupstack/android") == "downloaded"
    assert _local_column(result.output, "cqadupstack/english") == ""
    assert _local_column(result.output, "nfcorpus") == ""
