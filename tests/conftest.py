"""Shared fixtures: where the real BEIR test sets live (``../shared/datasets`` beside the checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


def shared_dataset(name: str) -> Path:
    """Path of ``../shared/datasets/<name>``; skips the test with a clear reason when it is absent."""
    path = SHARED_DATASETS / name
    if not (path / "corpus.jsonl.gz").is_file():
        pytest.skip(f"needs the real BEIR test set at {path} (../shared beside the checkout), which is absent")
    return path


@pytest.fixture
def scifact_dir() -> Path:
    return shared_dataset("scifact")


@pytest.fixture
def nfcorpus_dir() -> Path:
    return shared_dataset("nfcorpus")


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray (2 CPUs) for the whole session, shut down at the end; skips when Ray is absent."""
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[ray]'")
    pytest.importorskip("ray.data", reason="Ray Data is optional: pip install -e '.[ray]'")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture
def harness_cli(capsys, monkeypatch):
    """Run ``harness ARGS...`` in this process: (returncode, stdout, stderr) as a namespace."""
    import sys
    from types import SimpleNamespace

    from harness.cli import main

    def call(*args):
        monkeypatch.setattr(sys, "argv", ["harness", *map(str, args)])
        capsys.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return call
