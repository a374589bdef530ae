"""Two processes encoding the same documents with ``encoder='ray'`` encode them once
(retrievers/dense/retriever.py ``encode``: the driver holds the entry's ``harness.atomic.build_lock`` while its
Ray actors write the parts).

The local encoder's entries were locked (tests/retrievers/test_dense_build_lock.py), the Ray encoder's not:
two cold runs with ``encoder='ray'`` on one cache (two benchmark cells, a CI matrix sharing the cache) each
started an actor pool on the same missing chunks, side by side (both ``documents_cache: miss``; on GPUs,
hours twice). Now the second waits for the first (a warning says so) and loads the complete entry
(``documents_cache: hit``, no actor, the same run); a process killed while holding the lock releases it.
A cell that would wait while holding the only GPU of the bench's local Ray, which the first cell's actors need,
fails at once with the actors' one-line error instead of waiting without end. The model: the fake of
tests/retrievers/test_dense_ray.py (no torch); Ray: one local Ray of 1 CPU, in the one process that encodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.processes import json_result, until

pytest.importorskip("fcntl")

REPO = Path(__file__).resolve().parents[2]

# Indexes the corpus of test_dense_ray.py with encoder='ray' (1 actor). Its Ray encode (when it encodes) first
# writes ``<name>.encoding``; then, with ``hold``, it waits for the file ``go``; with ``refuse`` it exits 3 at
# once (a process that must not encode starts no Ray); else it starts a local Ray of 1 CPU and encodes with the
# fake model's actors. Prints its cache status, the rows it encoded and its run.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from retrievers.dense import distributed
    from tests.retrievers.test_dense_ray import CORPUS, QUERIES, FakeEncoder, retriever

    model_dir, cache, name, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    real = distributed.encode_missing

    def encode_missing(*args, **kwargs):
        (cache.parent / f"{name}.encoding").write_text("")
        deadline = time.monotonic() + 60
        while mode == "hold" and not (cache.parent / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if mode == "refuse":
            sys.exit(3)
        import ray
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        return real(*args, **kwargs, encoder_cls=FakeEncoder)

    distributed.encode_missing = encode_missing
    r = retriever(model_dir, cache, encoder="ray", ray_workers=1)
    r.index(CORPUS)
    stats = r.stats()
    print(json.dumps({"cache": stats["documents_cache"], "encoded": stats["documents_encoded"],
                      "run": r.search(QUERIES, 5).to_dict()}))
""")


@pytest.fixture
def model_dir(tmp_path):
    """The fake model's folder (as tests/retrievers/test_dense_ray.py makes it)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (folder / "model.safetensors").write_bytes(b"fake weights")
    return folder


@pytest.fixture
def processes():
    """The processes a test starts: any still running at its end (a failed test) are killed."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)


def _start(processes: list, tmp_path: Path, model_dir: Path, name: str, mode: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("RAY_ADDRESS", None)
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, str(model_dir), str(tmp_path / "cache"), name, mode],
                               env=env, cwd=str(REPO), stdout=subprocess.PIPE,
                               stderr=open(tmp_path / f"{name}.err", "w"), text=True)
    processes.append(process)
    return process


def test_a_second_ray_encode_waits_for_the_first_and_loads_it(model_dir, tmp_path, processes):
    first = _start(processes, tmp_path, model_dir, "first", "hold")
    until(lambda: (tmp_path / "first.encoding").exists(), "the first encoding to start", timeout=120)
    second = _start(processes, tmp_path, model_dir, "second", "refuse")
    until(lambda: "waiting for it" in (tmp_path / "second.err").read_text() or second.poll() is not None,
          "the second to wait (or to finish)", timeout=120)
    assert not (tmp_path / "second.encoding").exists()  # (it started its own actors beside the first's)
    (tmp_path / "go").write_text("")
    a, b = json_result(first, timeout=300), json_result(second, timeout=300)
    assert (a["cache"], a["encoded"]) == ("miss", 40)
    assert (b["cache"], b["encoded"]) == ("hit", 0)
    assert not (tmp_path / "second.encoding").exists()
    assert b["run"] == a["run"]
    assert "another process is encoding the documents of" in (tmp_path / "second.err").read_text()
    assert list((tmp_path / "cache" / ".locks").glob("documents-*.lock"))


def test_a_ray_encode_killed_while_holding_the_lock_lets_the_next_process_encode(model_dir, tmp_path, processes):
    first = _start(processes, tmp_path, model_dir, "first", "hold")
    until(lambda: (tmp_path / "first.encoding").exists(), "the first encoding to start", timeout=120)
    first.send_signal(signal.SIGKILL)  # (while it holds the lock; before it starts Ray)
    first.communicate(timeout=60)
    b = json_result(_start(processes, tmp_path, model_dir, "second", "encode"), timeout=300)
    assert (b["cache"], b["encoded"]) == ("miss", 40)
    assert (tmp_path / "second.encoding").exists()


class _OneGpuTask:
    """Ray as a benchmark cell's task sees it: connected, a cluster of one GPU, that GPU held by the task."""

    class _Context:
        def get_assigned_resources(self):
            return {"CPU": 0.0, "GPU": 1.0}

    def is_initialized(self):
        return True

    def cluster_resources(self):
        return {"CPU": 8.0, "GPU": 1.0}

    def get_runtime_context(self):
        return self._Context()


def test_a_cell_holding_the_gpu_the_encoding_cell_needs_fails_instead_of_waiting(model_dir, tmp_path, monkeypatch):
    """A pipeline cell (dense encoder='ray' -> a reranker on cuda) holds the only GPU of the local Ray the bench
    started while another cell's Ray encode of the same documents holds the lock and its actor waits for that
    GPU: waiting would never end. It fails at once, with the error its own actors would have given."""
    from harness import raycluster
    from harness.atomic import build_lock
    from harness.errors import HarnessError
    from retrievers.dense import DenseRetriever
    from tests.retrievers.test_dense_ray import CHUNK, CORPUS, FakeModel

    monkeypatch.setattr(raycluster, "_started_here", True)
    monkeypatch.setitem(sys.modules, "ray", _OneGpuTask())
    r = DenseRetriever(FakeModel("fake", model_dir, device="cuda"), cache_dir=str(tmp_path / "cache"),
                       cache_chunk_size=CHUNK, progress=False, encoder="ray")
    outcome: list = []

    def index():
        try:
            r.index(CORPUS)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome.append(exc)
    # the entry's name: a local encode of the same documents in another cache folder (the same key)
    DenseRetriever(FakeModel("fake", model_dir), cache_dir=str(tmp_path / "probe"), cache_chunk_size=CHUNK,
                   progress=False).index(CORPUS)
    entry = next((tmp_path / "probe").glob("documents-*")).name
    release = build_lock(tmp_path / "cache" / ".locks" / f"{entry}.lock")  # the other cell, encoding
    worker = threading.Thread(target=index, daemon=True)
    try:
        worker.start()
        worker.join(timeout=60)
        waited = worker.is_alive()
    finally:
        release()  # (lets an index() that waits go on and end)
        worker.join(timeout=60)
    assert not waited, "index() waited for the lock while holding the GPU the lock holder's actors need"
    assert isinstance(outcome[0], HarnessError)
    assert "the Ray encoder's actors need a GPU each and the task encoding holds 1 of the cluster's 1" \
        in str(outcome[0])
