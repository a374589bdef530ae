"""Entry points as the packaging spec writes them (second plugin author's review).

An entry point's object reference is ``module:attr`` where attr may be dotted (``module:Outer.Inner``),
with optional spaces around the colon and optional ``[extras]`` (importlib.metadata.EntryPoint.pattern;
``EntryPoint.load()`` loads all three). The registry split the value at the colon and took the rest as
one attribute name, so such a plugin was refused: "cannot load retriever 'plug_ep:Holder.Inner': module
'plug_ep' has no attribute 'Holder.Inner'".
"""

from __future__ import annotations

import sys

import pytest

from harness.errors import HarnessError
from harness.registry import plugin_versions, retriever_class

SOURCE = """
from harness.retriever import Retriever
from harness.run import Run

class Plain(Retriever):
    name = "plain"
    def index(self, corpus): pass
    def search(self, queries, k): return Run.from_dict({})

class Holder:
    class Inner(Plain):
        name = "inner"
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "plug_ep.py").write_text(SOURCE)
    info = tmp_path / "plug_ep_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-ep-dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[retrieval_harness.retrievers]\n"
                                           "ep-nested = plug_ep:Holder.Inner\n"
                                           "ep-extras = plug_ep:Plain [fast]\n"
                                           "ep-spaced = plug_ep : Plain\n"
                                           "run-file = plug_ep:Plain\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plug_ep", raising=False)
    yield
    monkeypatch.delitem(sys.modules, "plug_ep", raising=False)


@pytest.mark.parametrize("name, cls", [("ep-nested", "Inner"), ("ep-extras", "Plain"), ("ep-spaced", "Plain"),
                                       ("plug_ep:Holder.Inner", "Inner")])
def test_entry_points_with_dotted_attributes_extras_or_spaces_load(plugin, name, cls):
    loaded = retriever_class(name)
    assert loaded.__name__ == cls and loaded.__module__ == "plug_ep"
    if not name.startswith("plug_ep:"):  # through its entry point: its distribution's release is recorded
        assert plugin_versions(loaded) == {"plug-ep-dist": "1.0"}


@pytest.mark.parametrize("spec, message", [
    ("plug_ep:Holder.Nope",
     r"cannot load retriever 'plug_ep:Holder.Nope': type object 'Holder' has no attribute 'Nope'"),
    ("plug_ep:Holder", r"'plug_ep:Holder' is not a subclass of retrievers.Retriever"),
    ("plug_ep:", r"cannot load retriever 'plug_ep:': module 'plug_ep' has no attribute ''"),
])
def test_references_that_name_no_retriever_stay_one_clear_error(plugin, spec, message):
    with pytest.raises(HarnessError, match=message):
        retriever_class(spec)


def test_a_name_two_distributions_register_is_refused_not_one_taken_at_random(plugin):
    # plug-ep-dist registers "run-file" too. The registry kept whichever entry point came last in
    # sys.path order: the built-in under the `harness` script, the plugin's under `python -c` run in
    # the source tree (its egg-info first on the path): one name, two systems, silently.
    with pytest.raises(HarnessError, match=r"retriever 'run-file' is registered by more than one installed "
                                           r"distribution: plug-ep-dist \(plug_ep:Plain\), retrieval-harness "
                                           r"\(retrievers.run_file:RunFileRetriever\); name the one to run as "
                                           r"module:Class"):
        retriever_class("run-file")
    assert retriever_class("retrievers.run_file:RunFileRetriever").__name__ == "RunFileRetriever"
