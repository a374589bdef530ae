"""A plugin's code digest covers the packages of its bases (harness/plugin_code.py).

A plugin class whose scoring lives in a base class of another local package (``lab_base.scoring.SignedBase``,
a group's shared code) had only its own package hashed: with the base edited, a benchmark cell of the
plugin was "reused" with the old base's numbers.

Worked example (the three-document dataset of tests/test_plugin_code.py): the base scores document i
SIGN * i, SIGN a class attribute of the base. SIGN = 1: d3, d2, d1, so d1 (relevant) at rank 3 and
NDCG@10 = 1 / log2(4) = 0.5; SIGN = -1: d1 first, NDCG@10 = 1.0.
"""

from __future__ import annotations

import abc
import hashlib
from pathlib import Path

import pytest

from harness import plugin_code as pc
from tests.test_plugin_code import bench_of, expected_digest, fake_class, pipeline_of, write_dataset

BASE = '''
from harness.run import Run
from retrievers import Retriever


class SignedBase(Retriever):
    SIGN = {sign}

    def params(self):
        return {{}}

    def index(self, corpus):
        self._ids = list(corpus.ids)

    def search(self, queries, k):
        return Run.from_dict({{q: {{d: float(self.SIGN * i) for i, d in enumerate(self._ids)}} for q in queries.ids}})
'''

PLUGIN = '''
from lab_base.scoring import SignedBase


class Signed(SignedBase):
    name = "signed"
'''


def write_packages(root: Path, sign: int) -> tuple[Path, Path]:
    base, plugin = root / "lab_base", root / "lab_plugin"
    for package in (base, plugin):
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text("")
    (base / "scoring.py").write_text(BASE.format(sign=sign))
    (plugin / "retriever.py").write_text(PLUGIN)
    return base, plugin


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(pc, "_DIGESTS", {})


def test_the_package_of_each_base_is_hashed_beside_the_plugins(tmp_path, fresh, monkeypatch):
    base_pkg, plugin_pkg = write_packages(tmp_path, 1)
    base = fake_class("lab_base.scoring", [str(base_pkg)], str(base_pkg / "scoring.py"), monkeypatch)
    mixin = type("Sized", (abc.ABC,), {"__module__": "abc"})  # the standard library: not hashed
    fake_class("lab_plugin.retriever", [str(plugin_pkg)], str(plugin_pkg / "retriever.py"), monkeypatch)
    plugin = type("Signed", (base, mixin), {"__module__": "lab_plugin.retriever"})
    before = pc.plugin_code(plugin)
    assert before == {"lab_base": expected_digest(base_pkg), "lab_plugin": expected_digest(plugin_pkg)}
    assert list(before) == ["lab_base", "lab_plugin"]  # (sorted: the same key whatever the bases' order)
    assert pc.plugin_code(base) == {"lab_base": expected_digest(base_pkg)}
    (base_pkg / "scoring.py").write_text(BASE.format(sign=-1))
    monkeypatch.setattr(pc, "_DIGESTS", {})  # (a new process)
    after = pc.plugin_code(plugin)
    assert after["lab_plugin"] == before["lab_plugin"] and after["lab_base"] != before["lab_base"]
    assert after["lab_base"] == expected_digest(base_pkg)


def test_a_plugin_on_a_built_in_base_has_its_own_package_alone(tmp_path, fresh, monkeypatch):
    from retrievers.bm25 import BM25Retriever

    _, plugin_pkg = write_packages(tmp_path, 1)
    fake_class("lab_plugin.retriever", [str(plugin_pkg)], str(plugin_pkg / "retriever.py"), monkeypatch)
    plugin = type("MyBM25", (BM25Retriever,), {"__module__": "lab_plugin.retriever"})
    assert pc.plugin_code(plugin) == {"lab_plugin": expected_digest(plugin_pkg)}


def test_a_bench_cell_of_a_plugin_whose_base_was_edited_runs_again(tmp_path):
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    base_pkg, plugin_pkg = write_packages(root, 1)
    bench = bench_of(tmp_path, root, data, "lab_plugin.retriever:Signed", "signed")
    out, first = bench()
    assert "1 run" in out and first["metrics"]["NDCG@10"] == pytest.approx(0.5)
    assert first["versions"]["plugin_code"] == {"lab_base": expected_digest(base_pkg),
                                                "lab_plugin": expected_digest(plugin_pkg)}
    assert "1 reused" in bench()[0]
    (base_pkg / "scoring.py").write_text(BASE.format(sign=-1))
    out, edited = bench()
    assert "1 run" in out  # it said "1 reused", with the old base's NDCG@10 0.5
    assert edited["metrics"]["NDCG@10"] == pytest.approx(1.0)
    assert edited["versions"]["plugin_code"]["lab_base"] == expected_digest(base_pkg)


def test_a_pipeline_stage_of_a_plugin_whose_base_was_edited_is_computed_again(tmp_path):
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    base_pkg, _ = write_packages(root, 1)
    run = pipeline_of(tmp_path, root, data, "lab_plugin.retriever:Signed")
    first, again = run("a"), run("b")
    assert first["metrics"]["NDCG@10"] == pytest.approx(0.5) and again["stages"][0]["cache"] == "hit"
    (base_pkg / "scoring.py").write_text(BASE.format(sign=-1))
    edited = run("c")
    assert edited["stages"][0]["cache"] == "miss"  # it was "hit", with NDCG@10 0.5
    assert edited["metrics"]["NDCG@10"] == pytest.approx(1.0)


def test_a_sourceless_package_is_hashed_from_its_bytecode(tmp_path, fresh, monkeypatch):
    """A package shipped as .pyc files alone (compiled, sources removed) hashed no file: its digest was the
    empty list's, the same before and after an edit. Its .pyc files are its code; a normal package's
    __pycache__ is still skipped (its bytecode is its .py files')."""
    import py_compile

    package = tmp_path / "bytecode_only"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = tmp_path / "scoring_src.py"

    def ship(sign: int) -> None:
        source.write_text(f"SIGN = {sign}\n")
        py_compile.compile(str(source), cfile=str(package / "scoring.pyc"), doraise=True)

    ship(1)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "stale.cpython-311.pyc").write_bytes(b"not hashed")
    cls = fake_class("bytecode_only.scoring", [str(package)], str(package / "scoring.pyc"), monkeypatch)
    files = {name: (package / name).read_bytes() for name in ("__init__.py", "scoring.pyc")}
    lines = sorted(f"{name}\0{hashlib.sha256(data).hexdigest()}\n" for name, data in files.items())
    before = pc.plugin_code(cls)
    assert before == {"bytecode_only": hashlib.sha256("".join(lines).encode()).hexdigest()}
    ship(-1)
    monkeypatch.setattr(pc, "_DIGESTS", {})  # (a new process)
    assert pc.plugin_code(cls) != before


def test_a_base_from_an_installed_library_is_not_hashed(tmp_path, fresh, monkeypatch):
    """A base imported from an installed distribution's folder (site-packages: torch.nn.Module, an sklearn
    mixin) is a library's code, whose upgrade keys nothing (library versions are recorded, not keyed): only the
    plugin's own package is hashed. The same base package in a local folder is hashed (the first test)."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "lab_base"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    (site / "scoring.py").write_text(BASE.format(sign=1))
    base = fake_class("lab_base.scoring", [str(site)], str(site / "scoring.py"), monkeypatch)
    _, plugin_pkg = write_packages(tmp_path / "local", 1)
    fake_class("lab_plugin.retriever", [str(plugin_pkg)], str(plugin_pkg / "retriever.py"), monkeypatch)
    plugin = type("Signed", (base,), {"__module__": "lab_plugin.retriever"})
    assert pc.plugin_code(plugin) == {"lab_plugin": expected_digest(plugin_pkg)}
    # a plugin installed there itself is still hashed (its own package: an editable or a reinstalled release)
    installed = type("Installed", (base,), {"__module__": "lab_base.scoring"})
    assert pc.plugin_code(installed) == {"lab_base": expected_digest(site)}
