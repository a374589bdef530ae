"""The cross-encoder's device kind is in its params(), so in a pipeline rerank stage's cache key and a bench
cell's fingerprint: a GPU's kernels round otherwise than the CPU's (a cuda run's scores differ from a cpu
run's in the last bits), and a cuda run was served a cpu run's cached stage. Device strings only (no GPU,
no model loaded): ``cuda`` and ``cuda:1`` are one kind, ``auto`` is what torch resolves it to here (cpu on a
machine without a GPU, so a cpu stage is shared by ``auto`` and ``cpu`` there)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from harness.pipeline.cache import stage_key  # noqa: E402
from retrievers.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402


@pytest.fixture
def model_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    return folder


def key(folder, device):
    params = CrossEncoderReranker(str(folder), device=device).params()
    return params["device"], stage_key({"type": "rerank", "component": "cross-encoder", "resolved": params})


def test_a_cuda_stage_is_not_a_cpu_stage(model_folder):
    import torch

    cpu, cuda, cuda1 = key(model_folder, "cpu"), key(model_folder, "cuda"), key(model_folder, "cuda:1")
    assert cpu[0] == "cpu" and cuda[0] == "cuda" and cuda1[0] == "cuda"
    assert cpu[1] != cuda[1]  # (on the old code both were one key: params() had no device)
    assert cuda[1] == cuda1[1]  # the same kind of device: one stage
    auto = key(model_folder, "auto")
    assert auto == (cuda if torch.cuda.is_available() else cpu)
