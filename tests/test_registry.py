"""The core finds retrievers only through the registry: entry points (built-ins included) or module:Class."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.registry import registered, retriever_class
from harness.retriever import Retriever

REPO = Path(__file__).resolve().parents[1]


def test_core_sources_never_import_the_retrievers_package():
    pattern = re.compile(r"^\s*(from|import)\s+retrievers\b")
    offenders = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "harness").rglob("*.py"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.match(line)]
    assert offenders == []


def test_builtins_are_entry_points_like_any_plugin():
    # pyproject.toml [project.entry-points."retrieval_harness.retrievers"]
    assert {name: registered()[name] for name in ("bm25", "dense", "run-file")} == {
        "bm25": "retrievers.bm25:BM25Retriever", "dense": "retrievers.dense:DenseRetriever",
        "run-file": "retrievers.run_file:RunFileRetriever"}
    cls = retriever_class("run-file")
    assert cls.__name__ == "RunFileRetriever" and issubclass(cls, Retriever)
    with pytest.raises(HarnessError, match="unknown retriever 'nope'; available: bm25, dense, .*run-file.*, "
                                           "or module:Class"):
        retriever_class("nope")


def test_loading_the_core_loads_no_retriever():
    code = ("import sys, harness.cli.run, harness.cli.bench, harness.bench, harness.compare, harness.experiment; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'retrievers'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("source, message", [
    ("def broken(:\n", r"cannot load retriever 'plug_mod:X': SyntaxError: "),
    ("raise RuntimeError('needs a licence key')\n", r"cannot load retriever 'plug_mod:X': RuntimeError: needs a licence key"),
    ("from harness.retriever import Retriever\nclass X(Retriever):\n    name = 'x'\n",
     r"'plug_mod:X' does not implement retrievers.Retriever: abstract method\(s\) index, search"),
])
def test_a_plugin_that_cannot_be_loaded_is_one_clear_error(tmp_path, monkeypatch, source, message):
    # A module that fails to import (not only ImportError), or a class that leaves the interface's
    # abstract methods out, is a HarnessError naming the spec (one line on the command line).
    (tmp_path / "plug_mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plug_mod", raising=False)
    with pytest.raises(HarnessError, match=message):
        retriever_class("plug_mod:X")
    monkeypatch.delitem(sys.modules, "plug_mod", raising=False)


def test_a_plugin_may_take_a_parameter_called_name(tmp_path, monkeypatch):
    # create(name, **params) took the plugin's `name=` as its own first argument: "TypeError: create()
    # got multiple values for argument 'name'", a traceback from `harness run -p name=...` (and from a
    # bench config's params.name). The parameter reaches the plugin.
    from harness.registry import create

    (tmp_path / "named_param_plugin.py").write_text(
        "from harness.retriever import Retriever\n"
        "class P(Retriever):\n"
        "    def __init__(self, name: str = 'p'):\n"
        "        self.name = name\n"
        "    def index(self, corpus): pass\n"
        "    def search(self, queries, k): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "named_param_plugin", raising=False)
    assert create("named_param_plugin:P", name="my-system").name == "my-system"
    monkeypatch.delitem(sys.modules, "named_param_plugin", raising=False)
