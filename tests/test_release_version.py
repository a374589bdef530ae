"""The release is written once: ``harness.__version__``, which pyproject.toml reads (setuptools
``dynamic = ["version"]``). Before, pyproject.toml and harness/__init__.py each wrote "0.1.0", and a
release bumping one of them would have recorded another version in metrics.json than pip shows."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import harness

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_pyproject_takes_the_version_from_harness():
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert "version" not in config["project"]
    assert config["project"]["dynamic"] == ["version"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "harness.__version__"}


def test_installed_metadata_shows_the_same_release():
    # what `pip show retrieval-harness` prints is what metrics.json records as versions.retrieval-harness
    assert importlib.metadata.version("retrieval-harness") == harness.__version__
