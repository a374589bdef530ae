"""Regression review of the datasets UX, default split and cache-version commits (fb146f9..bc31b54).

Expected behaviour from docs/datasets.md ("a damaged DOWNLOAD.json ... one clear line"); worked by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.datasets import app
from harness.datasets import download as dl
from harness.errors import HarnessError

runner = CliRunner()


def _small(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d0", "title": "", "text": "w"}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q0", "text": "w"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\n")


@pytest.mark.parametrize("files", [[1], ["corpus.jsonl"], "corpus.jsonl", 3])
def test_a_download_manifest_whose_files_is_no_table_is_one_line_naming_it(tmp_path, monkeypatch, files):
    # (was: `harness datasets info nfcorpus` ended in an AttributeError traceback, 'list' object has no
    # attribute 'items', where every other damaged DOWNLOAD.json is one line naming the file)
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "datasets" / "nfcorpus"
    _small(folder)
    (folder / "DOWNLOAD.json").write_text(json.dumps({"url": "u", "bytes": 1, "sha256": "s", "downloaded_at": "d",
                                                      "files": files}))
    result = runner.invoke(app, ["info", "nfcorpus", "--no-counts"])
    assert isinstance(result.exception, HarnessError), result.output
    assert str(result.exception).startswith(f"{folder / 'DOWNLOAD.json'}: not a DOWNLOAD.json written by ")
    # a table of files, even an empty one, is read as before
    (folder / "DOWNLOAD.json").write_text(json.dumps({"url": "u", "bytes": 1, "sha256": "s", "downloaded_at": "d",
                                                      "files": {}}))
    result = runner.invoke(app, ["info", "nfcorpus", "--no-counts"])
    assert result.exit_code == 0, result.output
