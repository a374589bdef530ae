"""A component class defined in ``__main__``: the script a process runs, or an interactive session.

Such a class had no code digest at all (harness/plugin_code.py left ``__main__`` out), so after an edit of
the script a pipeline stage of it was a cache "hit" and a benchmark cell of it was "reused", both with the
numbers of the script before the edit. Now a script's class has the script's digest (``{"__main__": ...}``;
run as ``python -m lab.exp``, package ``lab``'s), and a class of a ``__main__`` without a source file (a
notebook, a script read from standard input) is never read back: its stage is computed every time and not
stored, its cell never reused.

Worked example (tests/test_plugin_code.py's): three documents d1, d2, d3, one query q1 judging d1 relevant
(grade 1); the script's retriever scores each document SIGN * (its position in the corpus). SIGN = 1: d1 at
rank 3, NDCG@10 = 1 / log2(3 + 1) = 0.5; SIGN = -1: d1 first, NDCG@10 = 1.0.
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

from tests.test_plugin_code import REPO, write_dataset

SCRIPT = '''
import json
import sys

from harness.bench.config import parse_config
from harness.bench.runner import BenchRunner
from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline.cache import StageCache
from harness.pipeline.run import run_pipeline
from harness.pipeline.spec import parse_pipeline
from harness.run import Run
from retrievers import Retriever

SIGN = {sign}


class PositionRetriever(Retriever):
    name = "position"

    def params(self):
        return {{}}

    def index(self, corpus):
        self._ids = list(corpus.ids)

    def search(self, queries, k):
        return Run.from_dict({{q: {{d: float(SIGN * i) for i, d in enumerate(self._ids)}} for q in queries.ids}})


SPEC = "__main__:PositionRetriever"
data, work, what = sys.argv[1:4]
if what == "pipeline":
    pipeline = parse_pipeline({{"name": "pp", "stages": [{{"name": "s", "type": "retrieve", "retriever": SPEC}}]}})
    experiment, outcomes = run_pipeline(load_dataset(data), pipeline, Evaluator(["NDCG@10"]), [10],
                                        cache=StageCache(work + "/stages"))
    print(json.dumps({{"status": outcomes[0].status, "ndcg": experiment.document.metrics["NDCG@10"],
                      "versions": experiment.document.versions}}))
else:
    config = parse_config({{"name": "p", "k": [10], "output_dir": work + "/results",
                           "datasets": [{{"path": data, "label": "tiny"}}],
                           "retrievers": [{{"type": SPEC, "label": "pos"}}],
                           "pipelines": [{{"label": "pp", "stages": [{{"name": "s", "type": "retrieve",
                                                                     "retriever": SPEC}}]}}]}})
    result = BenchRunner(config).run()
    print(json.dumps([[o.status, o.document.metrics["NDCG@10"]] for o in result.outcomes]))
'''


def run_script(script: Path, args: list[str], stdin: bool = False, module: str | None = None,
               cwd: Path | None = None) -> object:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(cwd) if cwd else "", str(REPO)])),
           "HARNESS_CACHE_DIR": str(script.parent / "cache")}
    if stdin:
        command, given = [sys.executable, "-", *args], script.read_text()
    elif module:
        command, given = [sys.executable, "-m", module, *args], None
    else:
        command, given = [sys.executable, str(script), *args], None
    proc = subprocess.run(command, input=given, capture_output=True, text=True, env=env, cwd=cwd or script.parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_script(path: Path, sign: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPT.format(sign=sign))
    return path


def file_digest(path: Path) -> str:
    """The module docstring's formula for one file: sha256 of "<name>\\0<sha256 of its bytes>\\n"."""
    return hashlib.sha256(f"{path.name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode()).hexdigest()


def test_a_pipeline_stage_of_an_edited_script_class_is_computed_again(tmp_path):
    data, work = write_dataset(tmp_path / "tiny"), tmp_path / "work"
    script = write_script(tmp_path / "exp.py", 1)
    first = run_script(script, [str(data), str(work), "pipeline"])
    assert first["status"] == "miss" and first["ndcg"] == pytest.approx(0.5)
    assert first["versions"]["plugin_code"] == {"__main__": file_digest(script)}
    assert run_script(script, [str(data), str(work), "pipeline"])["status"] == "hit"
    write_script(script, -1)
    edited = run_script(script, [str(data), str(work), "pipeline"])
    assert edited["status"] == "miss"  # it was "hit", with NDCG@10 0.5
    assert edited["ndcg"] == pytest.approx(1.0)
    assert edited["versions"]["plugin_code"] == {"__main__": file_digest(script)}


def test_a_stage_of_a_class_without_a_source_file_is_never_stored(tmp_path):
    # python - < exp.py: __main__.__file__ is "<stdin>", no file; as in a notebook, nothing keys the class's code
    data, work = write_dataset(tmp_path / "tiny"), tmp_path / "work"
    script = write_script(tmp_path / "exp.py", 1)
    for sign, ndcg in ((1, 0.5), (1, 0.5), (-1, 1.0)):
        write_script(script, sign)
        out = run_script(script, [str(data), str(work), "pipeline"], stdin=True)
        assert out["status"] == ("miss, not cached (PositionRetriever is defined in __main__ with no source file, "
                                 "as in a notebook or an interactive session: its code cannot be keyed)")
        assert out["ndcg"] == pytest.approx(ndcg)  # the third was a "hit" with 0.5
        assert "plugin_code" not in out["versions"]
    assert not [p for p in (work / "stages").rglob("*") if p.is_file()]  # nothing stored to be read back


def test_a_bench_cell_of_an_edited_script_class_runs_again(tmp_path):
    data, work = write_dataset(tmp_path / "tiny"), tmp_path / "work"
    script = write_script(tmp_path / "exp.py", 1)
    assert run_script(script, [str(data), str(work), "bench"]) == [["run", 0.5], ["run", 0.5]]
    assert run_script(script, [str(data), str(work), "bench"]) == [["reused", 0.5], ["reused", 0.5]]
    write_script(script, -1)
    # the retriever's cell and the pipeline's: both were "reused" with 0.5
    assert run_script(script, [str(data), str(work), "bench"]) == [["run", 1.0], ["run", 1.0]]


def test_a_bench_cell_of_a_class_without_a_source_file_is_never_reused(tmp_path):
    data, work = write_dataset(tmp_path / "tiny"), tmp_path / "work"
    script = write_script(tmp_path / "exp.py", 1)
    for sign, ndcg in ((1, 0.5), (1, 0.5), (-1, 1.0)):
        write_script(script, sign)
        # the third was [["reused", 0.5], ["reused", 0.5]]
        assert run_script(script, [str(data), str(work), "bench"], stdin=True) == [["run", ndcg], ["run", ndcg]]


def test_run_as_a_module_the_class_has_its_package_digest(tmp_path):
    # python -m lab.exp: the package lab is hashed as a plugin's (its helper module weights.py included)
    from tests.test_plugin_code import expected_digest

    data, work = write_dataset(tmp_path / "tiny"), tmp_path / "work"
    lab = tmp_path / "src" / "lab"
    write_script(lab / "exp.py", 1)
    (lab / "__init__.py").write_text("")
    (lab / "weights.py").write_text("W = 1\n")
    first = run_script(lab / "exp.py", [str(data), str(work), "pipeline"], module="lab.exp", cwd=tmp_path / "src")
    assert first["versions"]["plugin_code"] == {"lab": expected_digest(lab)}
    assert run_script(lab / "exp.py", [str(data), str(work), "pipeline"], module="lab.exp",
                      cwd=tmp_path / "src")["status"] == "hit"
    (lab / "weights.py").write_text("W = 2\n")  # a helper module's edit: another digest, the stage computed again
    edited = run_script(lab / "exp.py", [str(data), str(work), "pipeline"], module="lab.exp", cwd=tmp_path / "src")
    assert edited["status"] == "miss" and edited["versions"]["plugin_code"] == {"lab": expected_digest(lab)}
    assert edited["versions"]["plugin_code"] != first["versions"]["plugin_code"]


def test_unkeyed_code_names_a_base_class_too(monkeypatch):
    from harness import plugin_code as pc

    monkeypatch.setattr(pc, "_DIGESTS", {})
    main = types.ModuleType("__main__")  # (an interactive session's: no __file__)
    monkeypatch.setitem(sys.modules, "__main__", main)
    base = type("NotebookBase", (), {"__module__": "__main__"})
    derived = type("Derived", (base,), {"__module__": "tests.test_plugin_code_main"})
    assert pc.unkeyed_code(derived) == ("NotebookBase is defined in __main__ with no source file, as in a notebook "
                                        "or an interactive session: its code cannot be keyed")
    from retrievers.bm25 import BM25Retriever

    assert pc.unkeyed_code(BM25Retriever) is None
    main.__file__ = str(Path(__file__))  # a script's: keyed by its file
    assert pc.unkeyed_code(derived) is None
    assert pc.plugin_code(base) == {"__main__": file_digest(Path(__file__))}


@pytest.mark.parametrize("spec_name, folder", [("ipykernel_launcher", "site-packages"), ("cProfile", "lib"),
                                               ("harness.__main__", "harness")])
def test_a_launchers_main_is_not_the_class_file(tmp_path, monkeypatch, spec_name, folder):
    # A notebook kernel's launcher (an installed library's __main__), a standard library runner (python -m cProfile
    # exp.py: the script runs in a dict of its own) or the harness's own __main__: the class is not in that file,
    # which would have keyed it (its edits unseen): it cannot be keyed
    import importlib.machinery

    from harness import plugin_code as pc

    monkeypatch.setattr(pc, "_DIGESTS", {})
    launcher = tmp_path / folder / "launcher.py"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("X = 1\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(launcher)
    main.__spec__ = importlib.machinery.ModuleSpec(spec_name, None, origin=str(launcher))
    monkeypatch.setitem(sys.modules, "__main__", main)
    cls = type("Cell", (), {"__module__": "__main__"})
    assert pc.unkeyed_code(cls) is not None and pc.plugin_code(cls) == {}
    script = tmp_path / "src" / "lab_exp.py"  # python -m lab_exp: a module of the user's own
    script.parent.mkdir()
    script.write_text("X = 2\n")
    main.__file__ = str(script)
    main.__spec__ = importlib.machinery.ModuleSpec("lab_exp", None, origin=str(script))
    monkeypatch.setattr(pc, "_DIGESTS", {})
    assert pc.unkeyed_code(cls) is None and pc.plugin_code(cls) == {"lab_exp": file_digest(script)}


@pytest.mark.parametrize("where", ["retriever", "stage"])
def test_a_main_class_under_the_ray_executor_is_refused_before_anything_runs(tmp_path, monkeypatch, where):
    # Each such cell failed on its Ray worker with "module '__main__' has no attribute 'PositionRetriever'", the
    # class being right there in the driver's script: a worker's __main__ is its own
    from harness.bench.config import parse_config
    from harness.bench.runner import BenchRunner
    from harness.errors import HarnessError
    from retrievers import Retriever

    script = types.ModuleType("__main__")  # (the driver's script)
    script.PositionRetriever = type("PositionRetriever", (Retriever,), {"__module__": "__main__", "name": "position",
                                                                        "params": lambda self: {}})
    monkeypatch.setitem(sys.modules, "__main__", script)
    data = write_dataset(tmp_path / "tiny")
    raw = {"name": "p", "k": [10], "output_dir": str(tmp_path / "results"),
           "datasets": [{"path": str(data), "label": "tiny"}], "retrievers": [{"type": "bm25", "label": "b"}]}
    if where == "retriever":
        raw["retrievers"].append({"type": "__main__:PositionRetriever", "label": "pos"})
        key = r"retrievers\[1\]\.type"
    else:
        raw["pipelines"] = [{"label": "pp", "stages": [{"name": "s", "type": "retrieve", "retriever": "bm25"},
                                                      {"name": "t", "type": "retrieve",
                                                       "retriever": "__main__:PositionRetriever"}]}]
        key = r"pipelines\[0\]\.stages\[1\]\.retriever"
    runner = BenchRunner(parse_config(raw).with_executor("ray"))
    with pytest.raises(HarnessError, match=rf"^<config>: {key}: '__main__:PositionRetriever' is a class of this "
                                           r"process's script \(__main__\), which a Ray worker does not import; "
                                           r".* or run the bench with --executor local$"):
        runner.run()
    assert not (tmp_path / "results").exists()  # nothing ran
