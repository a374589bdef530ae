"""``harness datasets`` sub-commands, driven through typer's CliRunner with a local HTTP server."""

from __future__ import annotations

import hashlib

import pytest
from typer.testing import CliRunner

from harness.cli.datasets import app
from harness.datasets import download as dl
from harness.errors import HarnessError
from tests.datasets.http_fixture import FlakyServer
from tests.datasets.test_download import _build_zip

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(dl.MIRROR_ENV, raising=False)
    return tmp_path / "cache"


def test_list_shows_registry_sizes(cache):
    result = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    # sizes from the registry (BEIR paper Table 1): quora 522,931 docs / 10,000 queries
    line = next(line for line in result.output.splitlines() if " quora " in line)
    assert "522,931" in line and "10,000" in line
    assert "cqadupstack/wordpress" in result.output


def test_info_before_and_after_download(cache, nfcorpus_dir):
    data = _build_zip(str(nfcorpus_dir))
    sha = hashlib.sha256(data).hexdigest()
    result = runner.invoke(app, ["info", "nfcorpus"])
    assert result.exit_code == 0
    assert "md5 (published by BEIR): a89dba18a62ef92f7d323ec890a0d38d" in result.output
    assert "not downloaded" in result.output
    with FlakyServer({"nfcorpus.zip": data}) as server:
        result = runner.invoke(app, ["download", "nfcorpus", "--url", server.url("ok", "nfcorpus.zip"),
                                     "--sha256", sha, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert str(cache / "datasets" / "nfcorpus") in result.output
    result = runner.invoke(app, ["info", "nfcorpus"])
    assert f"sha256 {sha}" in result.output and "(qrels: test)" in result.output


def test_download_wrong_mirror_checksum_raises_harness_error(cache, nfcorpus_dir):
    with FlakyServer({"nfcorpus.zip": _build_zip(str(nfcorpus_dir))}) as server:
        result = runner.invoke(app, ["download", "nfcorpus", "--mirror", server.base + "/ok", "--no-progress"])
    assert isinstance(result.exception, HarnessError)
    assert "checksum mismatch" in str(result.exception)
    assert not (cache / "datasets" / "nfcorpus").exists()


def test_registered_on_the_main_command(cache):
    from harness.cli import _register
    from harness.cli import app as main_app

    _register()
    result = runner.invoke(main_app, ["datasets", "info", "scifact"])
    assert result.exit_code == 0 and "5,183" in result.output  # BEIR paper Table 1: SciFact corpus size


@pytest.mark.parametrize("command", ["info", "download"])
@pytest.mark.parametrize("name, source", [("irds:beir/scifact", "an ir_datasets id"),
                                          ("hf:BeIR/scifact", "a Hugging Face dataset")])
def test_irds_and_hf_sources_are_named_as_such(cache, command, name, source):
    # (was: info said "unknown dataset 'irds:beir/scifact' (see `harness datasets list`)", download that the
    # name "cannot name a downloaded dataset ... use letters, digits"; both are fetched when first loaded)
    result = runner.invoke(app, [command, name])
    assert isinstance(result.exception, HarnessError)
    assert str(result.exception).startswith(f"{name}: {source}, fetched by ")
    assert f"`harness run -d {name}`" in str(result.exception)
