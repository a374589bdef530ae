"""The Ray encoder's actor plan (retrievers/dense/distributed.py plan_workers), second review.

A benchmark cell runs a pipeline in one Ray task that asks for what its stages ask for: a dense
stage with ``encoder = "ray"`` asks for nothing, a reranker on cuda for one GPU. On a local Ray with
one GPU (a workstation) the task then holds that GPU while the dense stage's actors, one GPU each,
wait for it: measured, `harness bench` with the pipeline dense(encoder=ray, device=cuda) ->
bi-encoder(device=cuda) on a 1-GPU local Ray waited without end and without a word (still running
after 60 s; the actors' pool never started). Expected: on the local Ray the bench started (which
never grows), one error line at once; on a cluster joined at an address the actors wait (an
autoscaler may add a GPU node), as cells do (harness/bench/executors.py).
"""

from __future__ import annotations

import pytest

from harness import raycluster
from harness.errors import HarnessError
from retrievers.dense.distributed import plan_workers


class FakeContext:
    def __init__(self, assigned):
        self.assigned = assigned

    def get_assigned_resources(self):
        if self.assigned is None:  # Ray's answer in the driver
            raise AssertionError("This method is only available when the process is a worker. Current mode: 0")
        return self.assigned


class FakeRay:
    def __init__(self, cluster, assigned):
        self.cluster, self.assigned = cluster, assigned

    def cluster_resources(self):
        return self.cluster

    def get_runtime_context(self):
        return FakeContext(self.assigned)


@pytest.mark.parametrize("device", ["cuda", "auto"])
def test_a_task_holding_the_only_gpu_of_a_local_ray_is_one_error(monkeypatch, device):
    monkeypatch.setattr(raycluster, "_started_here", True)
    one_gpu = {"CPU": 8.0, "GPU": 1.0}
    with pytest.raises(HarnessError) as err:
        plan_workers(FakeRay(one_gpu, {"CPU": 0.0, "GPU": 1.0}), device, None)
    assert str(err.value) == (
        f"device {device!r}: the Ray encoder's actors need a GPU each and the task encoding holds 1 of the "
        "cluster's 1 (another stage of its pipeline runs on one): the local Ray started for this bench never has "
        'another (use encoder = "local" there, or join a cluster with --address)')
    # a GPU left for the actors, the driver (no task), or a task holding none: planned as before
    assert plan_workers(FakeRay({"CPU": 8.0, "GPU": 2.0}, {"GPU": 1.0}), device, None) == (2, 1.0, "cuda")
    assert plan_workers(FakeRay(one_gpu, None), device, None) == (1, 1.0, "cuda")
    assert plan_workers(FakeRay(one_gpu, {"CPU": 1.0}), device, None) == (1, 1.0, "cuda")


def test_on_a_joined_cluster_the_actors_wait_for_a_gpu_node(monkeypatch):
    monkeypatch.setattr(raycluster, "_started_here", False)
    assert plan_workers(FakeRay({"CPU": 8.0, "GPU": 1.0}, {"GPU": 1.0}), "cuda", None) == (1, 1.0, "cuda")
