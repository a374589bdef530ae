"""A plugin imported from a zip archive has a code digest (harness/plugin_code.py).

A ``module:Class`` plugin on ``PYTHONPATH`` as a ``.zip`` (or a zipped egg) had none: its package's
``__path__`` (``/x/plug.zip/plug``) is no folder and its ``__file__`` no file, so ``plugin_code`` gave
``{}``. Seen from the CLI on SciFact with examples/plugin's idf-overlap zipped as ``zplug``:
``harness bench`` with the scoring edited (idf = ln(1 + N/df)) and the zip rebuilt said "1 reused" and
kept NDCG@10 0.6195, where a fresh folder computes 0.6146. The zip's members are now hashed as the
folder's files would be: the docstring's formula, so a zipped package and its unzipped folder have one
digest (computed below independently of the module).

Worked example (tests/test_plugin_code.py's): documents d1, d2, d3, query q1 judging d1 relevant; the
plugin scores each document SIGN * (its position), SIGN from a helper module. SIGN = 1: d1 at rank 3,
NDCG@10 = 1 / log2(4) = 0.5; SIGN = -1: d1 first, NDCG@10 = 1.0.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import zipfile
from pathlib import Path

import pytest

from harness import plugin_code as pc
from tests.test_plugin_code import expected_digest, harness_cli, write_dataset, write_plugin


def zip_folder(folder: Path, archive: Path, extra: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(folder.parent).as_posix())
        for name, text in (extra or {}).items():
            out.writestr(name, text)
    return archive


def test_a_zipped_package_has_its_folders_digest(tmp_path, monkeypatch):
    package = write_plugin(tmp_path / "src", 1)
    archive = zip_folder(package, tmp_path / "plug.zip",
                         {"planted_plugin/__pycache__/x.py": "skipped", "other/y.py": "not the package's"})
    monkeypatch.setattr(pc, "_DIGESTS", {})
    monkeypatch.syspath_prepend(str(archive))
    for name in ("planted_plugin", "planted_plugin.retriever", "planted_plugin.weights"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        cls = importlib.import_module("planted_plugin.retriever").PositionRetriever
        assert not Path(sys.modules["planted_plugin"].__path__[0]).is_dir()  # (imported from the zip)
        assert pc.plugin_code(cls) == {"planted_plugin": expected_digest(package)}  # was {}
    finally:
        for name in ("planted_plugin", "planted_plugin.retriever", "planted_plugin.weights"):
            sys.modules.pop(name, None)


def test_a_zipped_single_module_has_its_files_digest(tmp_path, monkeypatch):
    archive = tmp_path / "solo.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("zsolo.py", "class R:\n    pass\n")
    monkeypatch.setattr(pc, "_DIGESTS", {})
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.delitem(sys.modules, "zsolo", raising=False)
    try:
        cls = importlib.import_module("zsolo").R
        own = hashlib.sha256(b"class R:\n    pass\n").hexdigest()
        assert pc.plugin_code(cls) == {"zsolo": hashlib.sha256(f"zsolo.py\0{own}\n".encode()).hexdigest()}
    finally:
        sys.modules.pop("zsolo", None)


def test_a_bench_cell_of_an_edited_zipped_plugin_runs_again(tmp_path):
    data = write_dataset(tmp_path / "tiny")
    package = write_plugin(tmp_path / "src", 1)
    archive = zip_folder(package, tmp_path / "plugins.zip")
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "p"\nk = [10]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{data}", label = "tiny"}}]\n'
                      '[[retrievers]]\ntype = "planted_plugin.retriever:PositionRetriever"\nlabel = "pos"\n')
    metrics = tmp_path / "results" / "p" / "tiny" / "pos" / "metrics.json"

    def bench() -> str:
        return harness_cli(["bench", str(config), "-q"], archive, tmp_path / "cache", tmp_path).stdout

    assert "1 run" in bench()
    assert json.loads(metrics.read_text())["metrics"]["NDCG@10"] == pytest.approx(0.5)
    assert "1 reused" in bench()
    (package / "weights.py").write_text("SIGN = -1\n")
    archive.unlink()
    zip_folder(package, archive)
    assert "1 run" in bench()  # it said "1 reused", NDCG@10 0.5 kept
    record = json.loads(metrics.read_text())
    assert record["metrics"]["NDCG@10"] == pytest.approx(1.0)
    assert record["versions"]["plugin_code"] == {"planted_plugin": expected_digest(package)}
