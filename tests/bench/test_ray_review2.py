"""Second review of `harness bench --executor ray` (harness/bench/executors.py): a cell that fails
outside the retriever's own code (the driver's working directory missing on a node, a task Ray
could not run) is one line naming what is wrong; a retriever's ``resources`` hook may ask for Ray's
custom resources."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.bench import load_config, run_bench
from harness.bench import executors
from harness.bench.config import RetrieverSpec
from harness.bench.executors import RayExecutor
from harness.raycluster import shortfall
from retrievers import Retriever

from .test_ray_executor import write_config


def test_a_working_directory_missing_on_the_node_is_one_line_naming_it(ray_local, tmp_path, monkeypatch):
    """Tasks run in the driver's working directory, which must be on every node (docs/ray.md). Where
    it is not, the task raised before its cell ran and the cell's error was Ray's own message, cut
    at 200 characters: 'Ray task failed: RayTaskError(FileNotFoundError): \\x1b[36mray::_run_cell_remote()
    \\x1b[39m (pid=..., ip=...)\\n  File ".../executors.py", line 84, ...' -- colour codes, a traceback
    over 4 lines (the leaderboard.md row broken) and not the folder. Expected: one line naming the
    folder and the node, as for any cell error."""
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "only-on-the-driver"

    class DriverPath(type(Path())):  # the driver's cwd as the tasks see it: a folder their node lacks
        @classmethod
        def cwd(cls):
            return missing

    monkeypatch.setattr(executors, "Path", DriverPath)
    config = load_config(write_config(tmp_path, executor='[executor]\nkind = "ray"\n'))
    result = run_bench(config)
    expected = (f"cannot enter the working directory {missing} on the Ray node {socket.gethostname()} (No such "
                "file or directory): run the bench from a folder every node mounts at the same path (docs/ray.md)")
    assert [(o.status, o.error) for o in result.outcomes] == [("failed", expected)] * 3
    board = (tmp_path / "results" / "t" / "leaderboard.md").read_text()
    assert board.count(f"failed: {expected}") == 3  # each row whole, on its own line


def test_a_task_that_failed_before_its_cell_ran_is_one_line():
    """What ray.get raises for such a task: a RayTaskError whose text is Ray's traceback (first line
    'ray::f() (pid=..., ip=...)' with colour codes); the line is the cause's. Other Ray errors (a
    worker that died twice): their first line."""
    ray = pytest.importorskip("ray")
    cause = FileNotFoundError(2, "No such file or directory", "/data/x")
    err = ray.exceptions.RayTaskError(
        "_run_cell_remote", 'Traceback (most recent call last):\n  File "x.py", line 1, in f\nFileNotFoundError: ...',
        cause, proctitle="ray::_run_cell_remote()", pid=1, ip="10.0.0.1").as_instanceof_cause()
    assert "\n" in str(err)
    expected = "Ray task failed: FileNotFoundError: [Errno 2] No such file or directory: '/data/x'"
    assert executors._task_error(err) == expected
    nested = ray.exceptions.RayTaskError("outer", "Traceback ...", err, proctitle="ray::outer()")  # a task's task
    assert executors._task_error(nested.as_instanceof_cause()) == expected
    died = ray.exceptions.WorkerCrashedError()
    line = executors._task_error(died)
    assert line.startswith("Ray task failed: WorkerCrashedError: The worker died unexpectedly") and "\n" not in line


class _Asks:
    def __init__(self, request):
        self.request = request

    def resources(self, cluster):
        return self.request


def test_a_hook_asking_for_custom_resources(monkeypatch):
    """A retriever's ``resources(cluster)`` hook returns Ray task options (docs/ray.md), so also
    Ray's custom resources, ``{"resources": {"TPU": 1}}`` (raycluster.shortfall reads them): the
    executor compared the dicts with max(), TypeError: '>' not supported between instances of 'dict'
    and 'dict', and the bench ended with a traceback. Expected: a retriever's cell asks for them as
    given; a pipeline's, each resource name's largest request over its stages (as for num_gpus)."""
    executor = RayExecutor(None, 1.0)
    runner = SimpleNamespace(retriever=lambda spec: _Asks({"resources": {"TPU": 1}, "num_gpus": 0.5}))
    cell = SimpleNamespace(retriever=RetrieverSpec(type="tpu", label="tpu"))
    asked = executor.resources(runner, cell, {"CPU": 2.0})
    assert asked == {"num_cpus": 1.0, "resources": {"TPU": 1}, "num_gpus": 0.5}
    assert shortfall(asked, {"CPU": 2.0, "GPU": 1.0}) == "1 TPU (the cluster has 0)"

    import harness.registry

    requests = {"a": {"resources": {"TPU": 1, "fast_disk": 1}}, "b": {"resources": {"TPU": 2}, "num_gpus": 1}}
    monkeypatch.setattr(harness.registry, "create", lambda name, **params: _Asks(requests[name]))
    stages = [SimpleNamespace(type="retrieve", component=name, params={}) for name in requests]
    pipeline = SimpleNamespace(retriever=SimpleNamespace(stages=stages + [SimpleNamespace(type="fuse")]))
    assert executor.resources(None, pipeline, {"CPU": 2.0}) == {
        "num_cpus": 1.0, "resources": {"TPU": 2, "fast_disk": 1}, "num_gpus": 1}


class StartedHereProbe(Retriever):
    """A retriever (``tests.bench.test_ray_review2:StartedHereProbe``) that writes what
    harness.raycluster.started_here() says in the process that indexes, into ``probe.txt``."""

    name = "probe"

    def params(self):
        return {}

    def index(self, corpus):
        from harness import raycluster

        Path("probe.txt").write_text(str(raycluster.started_here()))
        self.ids = sorted(corpus.ids)

    def search(self, queries, k):
        from harness.run import Run

        return Run.from_dict({q: {d: 1.0 for d in self.ids[:k]} for q in queries.ids})


@pytest.mark.parametrize("started_here", [True, False])
def test_a_cells_task_knows_whether_the_driver_started_its_ray(ray_local, tmp_path, monkeypatch, started_here):
    """A cell's task runs in a worker process that never called raycluster.init, so started_here()
    was always False there: the Ray encoder inside a cell could not tell that the local Ray the bench
    started never grows (see test_dense_ray_review2). The executor now hands the driver's value on."""
    from harness import raycluster

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(raycluster, "_started_here", started_here)
    path = write_config(tmp_path, executor='[executor]\nkind = "ray"\n')
    text = path.read_text().split("[[retrievers]]")[0]
    path.write_text(text + '[[retrievers]]\ntype = "tests.bench.test_ray_review2:StartedHereProbe"\nlabel = "probe"\n'
                    '[executor]\nkind = "ray"\n')
    result = run_bench(load_config(path))
    assert [(o.status, o.error) for o in result.outcomes] == [("run", None)]
    assert (tmp_path / "probe.txt").read_text() == str(started_here)
