"""A plugin's code digest (harness/plugin_code.py) and what it reruns.

A ``module:Class`` plugin edited between two runs was not seen: a pipeline's stage of it was read
back from the stage cache ("hit") and a benchmark cell of it was "reused", both with the old code's
numbers. Seen from the CLI on SciFact with examples/plugin's idf-overlap as ``myplug:IdfOverlapRetriever``:
a pipeline stage NDCG@10 0.6195 (cache "hit") after its idf was changed, where a fresh run of the
edited code gives 0.6146.

Worked example used below: three documents d1, d2, d3 and one query q1 judging d1 relevant (grade 1);
the planted plugin scores each document SIGN * (its position in the corpus), SIGN read from a helper
module of its package (``planted_plugin/weights.py``), not the class's own module. SIGN = 1: d3 (2),
d2 (1), d1 (0): d1 at rank 3, NDCG@10 = 1 / log2(3 + 1) = 0.5. SIGN = -1: d1 (0) first, NDCG@10 = 1.0.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from harness import plugin_code as pc

REPO = Path(__file__).resolve().parents[1]

PLUGIN = '''
from harness.run import Run
from retrievers import Retriever

from planted_plugin import weights


class PositionRetriever(Retriever):
    name = "position"

    def params(self):
        return {}

    def index(self, corpus):
        self._ids = list(corpus.ids)

    def search(self, queries, k):
        return Run.from_dict({q: {d: float(weights.SIGN * i) for i, d in enumerate(self._ids)} for q in queries.ids})
'''


def write_plugin(root: Path, sign: int) -> Path:
    package = root / "planted_plugin"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "retriever.py").write_text(PLUGIN)
    (package / "weights.py").write_text(f"SIGN = {sign}\n")
    (package / "stopwords.txt").write_text("a\nthe\n")  # data, not code: not hashed
    return package


def write_dataset(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": d}) + "\n"
                                                 for d in ("d1", "d2", "d3")))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def expected_digest(package: Path) -> str:
    """The docstring's formula, computed here independently of the module."""
    lines = sorted(f"{p.relative_to(package).as_posix()}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                   for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(pc, "_DIGESTS", {})


def fake_class(module_name: str, top_path: list[str] | None = None, file: str | None = None,
               monkeypatch=None) -> type:
    top = types.ModuleType(module_name.partition(".")[0])
    if top_path is not None:  # (a regular package: its __init__.py)
        top.__path__, top.__file__ = top_path, os.path.join(top_path[0], "__init__.py")
    module = top if "." not in module_name else types.ModuleType(module_name)
    if file is not None:
        module.__file__ = file
    monkeypatch.setitem(sys.modules, top.__name__, top)
    monkeypatch.setitem(sys.modules, module_name, module)
    return type("Planted", (), {"__module__": module_name})


def test_digest_of_a_package_follows_the_formula(tmp_path, fresh, monkeypatch):
    package = write_plugin(tmp_path, 1)
    cls = fake_class("planted_plugin.retriever", [str(package)], str(package / "retriever.py"), monkeypatch)
    assert pc.plugin_code(cls) == {"planted_plugin": expected_digest(package)}


def test_an_edit_of_a_helper_module_changes_the_digest(tmp_path, fresh, monkeypatch):
    package = write_plugin(tmp_path, 1)
    cls = fake_class("planted_plugin.retriever", [str(package)], str(package / "retriever.py"), monkeypatch)
    before = pc.plugin_code(cls)
    (package / "weights.py").write_text("SIGN = -1\n")
    (package / "stopwords.txt").write_text("other data\n")
    monkeypatch.setattr(pc, "_DIGESTS", {})  # (a new process)
    after = pc.plugin_code(cls)
    assert before != after and after == {"planted_plugin": expected_digest(package)}
    (package / "weights.py").write_text("SIGN = 1\n")
    monkeypatch.setattr(pc, "_DIGESTS", {})
    assert pc.plugin_code(cls) == before  # the data file is not code: same code, same digest


def test_single_module_built_ins_and_fileless_classes(tmp_path, fresh, monkeypatch):
    single = tmp_path / "solo.py"
    single.write_text("X = 1\n")
    cls = fake_class("solo", None, str(single), monkeypatch)
    digest = hashlib.sha256(f"solo.py\0{hashlib.sha256(b'X = 1' + bytes([10])).hexdigest()}\n".encode()).hexdigest()
    assert pc.plugin_code(cls) == {"solo": digest}
    from retrievers.bm25 import BM25Retriever

    assert pc.plugin_code(BM25Retriever) == {}  # a built-in: the harness's version stands for its code
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # (an interactive session's: no file)
    assert pc.plugin_code(type("Local", (), {"__module__": "__main__"})) == {}
    assert pc.plugin_code(fake_class("nofile", None, None, monkeypatch)) == {}


def test_a_package_past_the_limits_hashes_the_class_module_alone(tmp_path, fresh, monkeypatch):
    package = write_plugin(tmp_path, 1)
    monkeypatch.setattr(pc, "MAX_FILES", 2)  # three .py files
    cls = fake_class("planted_plugin.retriever", [str(package)], str(package / "retriever.py"), monkeypatch)
    own = hashlib.sha256((package / "retriever.py").read_bytes()).hexdigest()
    assert pc.plugin_code(cls) == {
        "planted_plugin.retriever": hashlib.sha256(f"retriever.py\0{own}\n".encode()).hexdigest()}


def test_under_a_namespace_package_the_first_regular_package_is_hashed(tmp_path, fresh, monkeypatch):
    # nsco is a namespace package (no __init__.py) whose folder another distribution shares (nsco/other);
    # the plugin is nsco.search: hashing all of nsco would also hash (and be moved by) nsco/other
    import importlib

    search = tmp_path / "nsco" / "search"
    search.mkdir(parents=True)
    (search / "__init__.py").write_text("")
    (search / "retriever.py").write_text("class R:\n    pass\n")
    (tmp_path / "nsco" / "other").mkdir()
    (tmp_path / "nsco" / "other" / "__init__.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("nsco", "nsco.search", "nsco.search.retriever"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    cls = importlib.import_module("nsco.search.retriever").R
    try:
        before = pc.plugin_code(cls)
        assert before == {"nsco.search": expected_digest(search)}
        (tmp_path / "nsco" / "other" / "__init__.py").write_text("X = 2\n")
        monkeypatch.setattr(pc, "_DIGESTS", {})
        assert pc.plugin_code(cls) == before
    finally:
        for name in ("nsco", "nsco.search", "nsco.search.retriever"):
            sys.modules.pop(name, None)


def harness_cli(args: list[str], plugin_root: Path, cache: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_root), str(REPO)]),
           "HARNESS_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc


def pipeline_of(tmp_path: Path, root: Path, data: Path, spec: str):
    """``run(name)``: ``harness run --pipeline`` of one retrieve stage of plugin ``spec`` on ``data`` (its
    metrics.json), the plugins under ``root``."""
    config = tmp_path / "p.toml"
    config.write_text(f'name = "pp"\n[[stages]]\nname = "s"\ntype = "retrieve"\nretriever = "{spec}"\n')

    def run(name: str) -> dict:
        harness_cli(["run", "--pipeline", str(config), "-d", str(data), "-o", str(tmp_path / "res"), "-q", "--name",
                     name, "--k", "10"], root, tmp_path / "cache", tmp_path)
        return json.loads((tmp_path / "res" / "tiny" / name / "metrics.json").read_text())
    return run


def bench_of(tmp_path: Path, root: Path, data: Path, spec: str, label: str):
    """``bench()``: ``harness bench`` of one cell, plugin ``spec`` on ``data`` (its output and metrics.json)."""
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "p"\nk = [10]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{data}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "{spec}"\nlabel = "{label}"\n')
    metrics = tmp_path / "results" / "p" / "tiny" / label / "metrics.json"

    def bench() -> tuple[str, dict]:
        out = harness_cli(["bench", str(config), "-q"], root, tmp_path / "cache", tmp_path).stdout
        return out, json.loads(metrics.read_text())
    return bench


def test_a_pipeline_stage_of_an_edited_plugin_is_computed_again(tmp_path):
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    package = write_plugin(root, 1)
    run = pipeline_of(tmp_path, root, data, "planted_plugin.retriever:PositionRetriever")
    first, again = run("a"), run("b")
    assert first["metrics"]["NDCG@10"] == pytest.approx(0.5) and again["stages"][0]["cache"] == "hit"
    (package / "weights.py").write_text("SIGN = -1\n")
    edited = run("c")
    assert edited["stages"][0]["cache"] == "miss"  # it was "hit", with NDCG@10 0.5
    assert edited["metrics"]["NDCG@10"] == pytest.approx(1.0)


def test_a_bench_cell_of_an_edited_plugin_runs_again(tmp_path):
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    package = write_plugin(root, 1)
    bench = bench_of(tmp_path, root, data, "planted_plugin.retriever:PositionRetriever", "pos")
    out, first = bench()
    assert "1 run" in out and first["metrics"]["NDCG@10"] == pytest.approx(0.5)
    assert first["versions"]["plugin_code"] == {"planted_plugin": expected_digest(package)}
    assert "1 reused" in bench()[0]
    (package / "weights.py").write_text("SIGN = -1\n")
    out, edited = bench()
    assert "1 run" in out  # it said "1 reused", with NDCG@10 0.5
    assert edited["metrics"]["NDCG@10"] == pytest.approx(1.0)
    assert edited["versions"]["plugin_code"] == {"planted_plugin": expected_digest(package)}


def test_a_pipeline_stage_of_an_upgraded_entry_point_plugin_is_computed_again(tmp_path):
    # The same code under release 0.1.0 then 0.2.0 (an upgrade whose code this test keeps, so only the
    # release can tell the two apart): the stage key held neither, and 0.2.0's stage was a "hit".
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    write_plugin(root, 1)
    config = tmp_path / "p.toml"
    config.write_text('name = "pp"\n[[stages]]\nname = "pos"\ntype = "retrieve"\nretriever = "position"\n')

    def run(version: str, name: str) -> dict:
        dist = root / f"planted_plugin-{version}.dist-info"
        for old in root.glob("*.dist-info"):
            for file in old.iterdir():
                file.unlink()
            old.rmdir()
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: planted-plugin\nVersion: {version}\n")
        (dist / "entry_points.txt").write_text(
            "[retrieval_harness.retrievers]\nposition = planted_plugin.retriever:PositionRetriever\n")
        harness_cli(["run", "--pipeline", str(config), "-d", str(data), "-o", str(tmp_path / "res"), "-q", "--name",
                     name, "--k", "10"], root, tmp_path / "cache", tmp_path)
        return json.loads((tmp_path / "res" / "tiny" / name / "metrics.json").read_text())

    assert run("0.1.0", "a")["stages"][0]["cache"] == "miss"
    assert run("0.1.0", "b")["stages"][0]["cache"] == "hit"
    upgraded = run("0.2.0", "c")
    assert upgraded["stages"][0]["cache"] == "miss"  # it was "hit"
    assert upgraded["metrics"]["NDCG@10"] == pytest.approx(0.5)
