"""Dense encoding on a real two-node Ray cluster vs the local path, on synthetic documents.

Starts a Ray cluster on this machine (``ray start --head --num-cpus=1`` plus a second node
``ray start --address=... --num-cpus=1``, in a private temp dir, bounded by --timeout), then
encodes the same corpus (default 20,000 synthetic documents, MiniLM) three ways, each into a fresh
embedding cache:

* local: ``DenseRetriever.index`` in this process, torch on 1 thread (one worker's worth of CPU);
* ray x1: ``encoder="ray"``, one actor (1 CPU);
* ray x2: ``encoder="ray"``, two actors, one per node.

and prints docs/s for each, the Ray path's overhead on one worker against the local path
(goal: <= 10%), the 2-worker speed-up, and the largest difference between the Ray and local
embeddings. The cluster is always stopped at the end: every process whose command line names this
run's temp dir is terminated by its pid (``ray stop --force`` would also stop Ray clusters of
other users of the machine).

    python benchmarks/ray_encode.py                 # 20k documents
    python benchmarks/ray_encode.py --docs 2000     # a dry run

Needs ``pip install -e ".[ray]"``. Timings on a shared machine are noisy: the three runs are
measured side by side in one process and the ratios are what to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WORDS = ("protein cell gene expression patient clinical trial cancer therapy immune response tumor "
         "signal pathway receptor binding mutation risk cohort study dose effect model data analysis "
         "structure membrane enzyme activity level increase decrease treatment outcome infection virus").split()


def synthetic_corpus(n: int, seed: int = 7):
    from harness.datasets.corpus import Corpus

    rng = np.random.default_rng(seed)
    lengths = rng.integers(8, 40, size=n)
    texts = [" ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=int(m))) for m in lengths]
    return Corpus(ids=[f"doc{i}" for i in range(n)], titles=[""] * n, texts=texts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_cli() -> str:
    local = Path(sys.executable).parent / "ray"
    return str(local) if local.exists() else "ray"


def start_cluster(temp_dir: Path, timeout: float) -> str:
    """A head and a second node, 1 CPU each, with a fresh auth token (Ray >= 2.5x requires one)
    that this process also uses to connect."""
    import secrets

    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    port = free_port()
    common = ["--num-cpus=1", "--num-gpus=0", "--object-store-memory=200000000", "--disable-usage-stats"]
    head = [ray_cli(), "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false",
            f"--temp-dir={temp_dir}", *common]
    subprocess.run(head, check=True, capture_output=True, text=True, timeout=timeout)
    address = f"127.0.0.1:{port}"
    worker = [ray_cli(), "start", f"--address={address}", "--node-ip-address=127.0.0.1", f"--temp-dir={temp_dir}",
              *common]
    subprocess.run(worker, check=True, capture_output=True, text=True, timeout=timeout)
    return address


def own_pids(marker: str) -> list[int]:
    """Pids of processes whose command line contains ``marker`` (this run's temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(entry.name))
    return pids


def stop_cluster(temp_dir: Path) -> None:
    """Terminate this cluster's processes by pid (TERM, then KILL after 10 s)."""
    marker = str(temp_dir)
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 2.0)):
        pids = own_pids(marker)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.2)
            pids = own_pids(marker)
        if not pids:
            return


def timed_index(corpus, **params) -> tuple[float, np.ndarray, dict]:
    from retrievers.dense import DenseRetriever

    retriever = DenseRetriever(progress=False, **params)
    started = time.perf_counter()
    retriever.index(corpus)
    seconds = time.perf_counter() - started
    return seconds, np.asarray(retriever._docs), retriever.stats()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 (bundled)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds; the whole run is bounded by it")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)  # the local path on one worker's worth of CPU, as each Ray actor (num_cpus=1)
    corpus = synthetic_corpus(args.docs)
    temp_dir = Path(tempfile.mkdtemp(prefix="rb-", dir="/tmp"))  # short: Ray's unix sockets live in it
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("benchmark over --timeout")))
    signal.alarm(int(args.timeout))
    rows = []
    try:
        address = start_cluster(temp_dir, timeout=120)
        import ray

        ray.init(address=address, log_to_driver=False)
        print(f"cluster {address}: {ray.cluster_resources().get('CPU')} CPUs on {len(ray.nodes())} nodes; "
              f"{args.docs:,} documents, torch {torch.__version__}", flush=True)
        common = {"model": args.model, "device": "cpu"}
        local_s, local_emb, _ = timed_index(corpus, cache_dir=str(temp_dir / "cache-local"), **common)
        rows.append(("local, 1 thread", local_s))
        print(f"local  : {local_s:7.1f} s  {args.docs / local_s:7.1f} docs/s", flush=True)
        results = {}
        for workers in (1, 2):
            seconds, emb, stats = timed_index(corpus, cache_dir=str(temp_dir / f"cache-ray{workers}"),
                                              encoder="ray", ray_workers=workers, **common)
            results[workers] = seconds
            diff = float(np.abs(emb - local_emb).max())
            print(f"ray x{workers}: {seconds:7.1f} s  {args.docs / seconds:7.1f} docs/s  "
                  f"(actors {stats.get('documents_ray_actors')}, max |ray - local| = {diff:.2e})", flush=True)
        print(f"overhead of the Ray path on one worker: {results[1] / local_s - 1:+.1%} (goal <= +10%)")
        print(f"speed-up of 2 workers over 1: {results[1] / results[2]:.2f}x")
    finally:
        signal.alarm(0)
        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        finally:
            stop_cluster(temp_dir)
            left = own_pids(str(temp_dir))
            shutil.rmtree(temp_dir, ignore_errors=True)
            print(f"cluster stopped ({'all processes gone' if not left else f'{len(left)} left: {left}'})")


if __name__ == "__main__":
    main()
