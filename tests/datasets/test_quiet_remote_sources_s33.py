"""``harness run -q`` on an ``irds:`` or ``hf:`` dataset prints nothing but its result line.

The help says -q means "no progress bars, warnings or table"; the dependencies' own bars were still printed: ir_datasets'
``docs_iter: 5183doc [00:00, ...]`` while it read an irds corpus, and the ``datasets`` library's "Generating corpus
split" for an hf repo (probe of 2026-11-29). Both are tqdm bars with no switch of their own that the command could
set once they are imported (harness/cli/display.py, _tqdm_disabled). Data: SciFact (../shared) registered locally
with ir_datasets, and the hub layout of NFCorpus built as tests/datasets/test_hf.py builds it."""

from __future__ import annotations

import sys

import pytest

from tests.datasets.test_hf import hub_layout  # noqa: F401  (the fixture)


def _run_quiet(argv, capsys, monkeypatch, tmp_path) -> tuple[str, str]:
    from harness.cli import main

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "argv", ["harness", "run", *argv, "-o", str(tmp_path / "out"), "-q"])
    try:
        main()
    except SystemExit as exited:
        assert exited.code in (0, None)
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_an_irds_corpus_is_read_without_its_bar(scifact_dir, tmp_path, monkeypatch, capsys):
    pytest.importorskip("ir_datasets")
    from tests.datasets.test_irds import _register_beir

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    name = _register_beir(scifact_dir, gz=True)
    out, err = _run_quiet(["-d", f"irds:{name}"], capsys, monkeypatch, tmp_path)
    assert err == ""
    assert out == f"results written to {tmp_path / 'out' / name / 'bm25'}\n"


def test_an_hf_repo_is_read_without_its_bar(hub_layout, tmp_path, monkeypatch, capsys):  # noqa: F811
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    out, err = _run_quiet(["-d", f"hf:{hub_layout}"], capsys, monkeypatch, tmp_path)
    assert err == ""
    assert out.startswith("results written to ")
