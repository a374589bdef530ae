"""Load on ``harness serve``: N requests at concurrency C through the http retriever's client.

Starts ``harness serve --dataset scifact --retriever bm25 --port 0`` in a subprocess (always stopped),
sends ``--requests`` GET /search requests (SciFact's test queries, repeated under distinct ids, k = 10)
at ``--concurrency`` with the ``harness`` preset, retries off, and stops after ``--cap`` seconds at the
latest. Reports errors, throughput and latency percentiles, and, side by side in the same run, the
same queries searched in process one at a time by the same BM25 (the anchor): the ratio is what HTTP,
JSON and the service cost per query. Exit 1 on any error or when the cap is hit.

    PYTHONPATH=. python benchmarks/serve_load.py [--requests 2000] [--concurrency 16] [--cap 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from harness.datasets import load_dataset  # noqa: E402
from harness.datasets.corpus import Queries  # noqa: E402
from harness.serving import serve_process  # noqa: E402
from retrievers import create  # noqa: E402
from retrievers.http import HTTPRetriever  # noqa: E402
from retrievers.http.client import fetch_all_async  # noqa: E402


def percentiles(ms: np.ndarray) -> str:
    p50, p90, p95, p99 = np.percentile(ms, [50, 90, 95, 99])
    return f"p50 {p50:.2f} ms, p90 {p90:.2f}, p95 {p95:.2f}, p99 {p99:.2f}, max {ms.max():.2f}"


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid``, from /proc (NaN where unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _child_pid() -> int | None:
    """The pid of this process's one child (the server), from /proc (None where unreadable)."""
    try:
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
        return int(children[0]) if len(children) == 1 else None
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cap", type=float, default=60.0, help="Seconds after which the load stops.")
    args = parser.parse_args(argv)

    ds = load_dataset("scifact", "test")
    n = args.requests
    ids = [f"{i // len(ds.queries)}-{ds.queries.ids[i % len(ds.queries)]}" for i in range(n)]
    texts = [ds.queries.texts[i % len(ds.queries)] for i in range(n)]

    with serve_process("--dataset", "scifact", "--retriever", "bm25") as url:
        server_pid = _child_pid()
        client = HTTPRetriever(url=url, preset="harness", concurrency=args.concurrency, timeout=30, retries=0,
                               on_failure="empty")
        server_cpu, client_cpu = cpu_seconds(server_pid), cpu_seconds(os.getpid())
        start = time.perf_counter()
        try:
            outcomes = asyncio.run(asyncio.wait_for(
                fetch_all_async(client.template, ids, texts, args.k, client.settings, {}), args.cap))
        except asyncio.TimeoutError:
            print(f"stopped at the {args.cap:g} s cap before {n} requests completed", file=sys.stderr)
            return 1
        wall = time.perf_counter() - start
        server_cpu, client_cpu = cpu_seconds(server_pid) - server_cpu, cpu_seconds(os.getpid()) - client_cpu

    errors = [o.error for o in outcomes if o.error is not None]
    served = np.array([o.latency_s * 1000 for o in outcomes if o.latency_s is not None])
    print(f"harness serve (bm25, scifact): {n} requests, concurrency {args.concurrency}, k {args.k}: "
          f"{len(errors)} errors, {wall:.2f} s, {n / wall:.0f} requests/s")
    print(f"  latency over HTTP: {percentiles(served)}")
    print(f"  CPU per request: server {server_cpu / n * 1000:.2f} ms, client {client_cpu / n * 1000:.2f} ms "
          f"({os.cpu_count()} cores)")

    bm25 = create("bm25")
    bm25.index(ds.corpus)
    local = []
    for qid, text in zip(ds.queries.ids, ds.queries.texts):
        t = time.perf_counter()
        bm25.search(Queries([qid], [text]), args.k)
        local.append((time.perf_counter() - t) * 1000)
    local = np.array(local)
    print(f"  in process, one query at a time ({len(local)} queries): {percentiles(local)}")
    print(f"  ratio of medians (HTTP at concurrency {args.concurrency} / in process): "
          f"{np.median(served) / np.median(local):.1f}x; service time per request (wall / requests): "
          f"{wall / n * 1000:.2f} ms = {wall / n * 1000 / np.median(local):.1f}x the in-process median")
    if errors:
        print(f"first error: {errors[0]}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
