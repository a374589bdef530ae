"""Exact dense search at MS MARCO size: memory and correctness of the blocked search over a memory map.

    PYTHONPATH=. python benchmarks/dense_scale.py [--docs 2000000] [--dim 384] [--queries 1000]
                                                  [--path /tmp/dense_scale.npy] [--keep]
                                                  [--faiss IVF1024,Flat --faiss-docs 200000 --nprobe 32]

Writes synthetic float32 embeddings (seeded normal vectors, 1 in 50 rows a duplicate of another row
so that exact score ties occur) as one ``.npy`` -- the format of the embedding cache's
``embeddings.npy`` -- in a child process, then (queries made here, passed as a small ``.npy``) in a second, fresh child
process runs
retrievers.dense.exact.exact_search (cosine, top 10, the retriever's default blocks) over
``np.load(mmap_mode="r")`` of it, and reports that child's peak RSS (``ru_maxrss`` and ``VmHWM``:
anonymous memory plus file pages of the map resident at the peak), its ``RssAnon`` / ``RssFile``
at the end, and the mapped size. Finally (in this process, after the measurement) a brute-force
numpy reference, computed in document chunks too but with a plain float32 threshold and a
lexicographic sort instead of the int64 keys, must give the same top 10 (indices; scores within
``MAX_ULPS`` float32 ulps: BLAS kernels sum in a shape-dependent order on some CPUs).
The queries are perturbed copies of documents, half of them of duplicated documents (ties at the
top). Ids are ``d%07d``: string order = row order, so the id rank is the row number.
With ``--faiss FACTORY`` a faiss index over the first ``--faiss-docs`` rows is then built, cached,
reloaded from its cache file and searched, and its recall@10 against exact search reported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

K = 10
# The reference's products have other shapes than the blocked search's (all queries at once, 32,768-row
# chunks; the search: 256-query blocks, 16,384-row blocks padded to a multiple of 64), and a BLAS kernel may
# sum a dot product of 384 terms in another order for another shape, by CPU: on the machine of the earlier
# measurements the scores were bitwise equal; on an AMD EPYC (AVX2; OpenBLAS 0.3.31's Haswell kernels) 7% of them differ,
# by up to 8 ulps (numpy's own qn @ d.T of 256-query blocks differs from one product of all queries as
# much). The top 10 must be the reference's, in its order; the scores within MAX_ULPS.
MAX_ULPS = 64


def _status() -> dict:
    out = {}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[name] = int(value.split()[0]) * 1024
    return out


def make(path: str, n: int, dim: int, seed: int = 0) -> None:
    """Write the file with plain writes (no shared map: its dirty pages would count in RSS)."""
    rng = np.random.default_rng(seed)
    step = 65500  # a multiple of 50: row i (i % 50 == 0) == row i+1 within each block
    with open(path + ".tmp", "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": "<f4", "fortran_order": False, "shape": (n, dim)})
        for start in range(0, n, step):
            block = rng.standard_normal((min(step, n - start), dim), dtype=np.float32)
            block[::50][:len(block[1::50])] = block[1::50]
            block.tofile(handle)
    os.replace(path + ".tmp", path)


def read_rows(path: str, start: int, stop: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows ``start:stop`` (or the given ``rows``) of a C-order float32 .npy by plain reads."""
    with open(path, "rb") as handle:
        np.lib.format.read_magic(handle)
        shape, _, _ = np.lib.format.read_array_header_1_0(handle)
        offset, width = handle.tell(), shape[1] * 4
        if rows is None:
            handle.seek(offset + start * width)
            return np.fromfile(handle, dtype=np.float32, count=(min(stop, shape[0]) - start) * shape[1]).reshape(-1, shape[1])
        out = np.empty((len(rows), shape[1]), dtype=np.float32)
        for i, row in enumerate(rows.tolist()):
            handle.seek(offset + row * width)
            out[i] = np.fromfile(handle, dtype=np.float32, count=shape[1])
        return out


def queries_for(n: int, dim: int, count: int, path: str) -> np.ndarray:
    rng = np.random.default_rng(1)
    rows = np.sort(rng.choice(n // 50, size=count, replace=False)) * 50
    rows[1::2] += 7  # half of them not duplicated
    noise = rng.standard_normal((count, dim), dtype=np.float32) * np.float32(0.3)
    return read_rows(path, 0, 0, rows) + noise  # plain reads: no mapped pages in this process


def search(path: str, out: str) -> None:
    import resource

    from retrievers.dense.exact import exact_search

    docs = np.load(path, mmap_mode="r")
    q = np.load(out + ".queries.npy")  # made by the parent: reading their rows here would map pages too
    before = _status()
    peaks: dict = {}
    done = threading.Event()

    def sample() -> None:  # peak anonymous and file-backed RSS, sampled every 20 ms
        while not done.wait(0.02):
            for name, value in _status().items():
                peaks[name] = max(peaks.get(name, 0), value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    idx, scores = exact_search(q, docs, K, np.arange(docs.shape[0]), cosine=True)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    after = _status()
    np.savez(out, idx=idx, scores=scores)
    print(json.dumps({"seconds": round(seconds, 2), "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      "before": before, "after": after, "sampled_peaks": peaks, "mapped_bytes": int(docs.nbytes)}))


def reference(path: str, q: np.ndarray, n: int, chunk: int = 32768) -> tuple[np.ndarray, np.ndarray]:
    """Top K by a plain method: per chunk, candidates >= each query's K-th float32 score, then one
    lexsort by (score desc, row desc) of the candidates of all chunks."""
    qn = q / np.maximum(np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float32)), np.float32(1e-12))[:, None]
    cand_rows = [[] for _ in range(len(q))]
    cand_scores = [[] for _ in range(len(q))]
    for start in range(0, n, chunk):
        d = read_rows(path, start, start + chunk)  # plain reads: no mapped pages in this process
        d /= np.maximum(np.sqrt(np.einsum("ij,ij->i", d, d, dtype=np.float32)), np.float32(1e-12))[:, None]
        s = qn @ d.T
        kth = np.partition(s, s.shape[1] - K, axis=1)[:, s.shape[1] - K]
        for i in range(len(q)):
            hit = np.flatnonzero(s[i] >= kth[i])
            cand_rows[i].append(hit + start)
            cand_scores[i].append(s[i, hit])
    idx = np.empty((len(q), K), dtype=np.int64)
    scores = np.empty((len(q), K), dtype=np.float32)
    for i in range(len(q)):
        rows, vals = np.concatenate(cand_rows[i]), np.concatenate(cand_scores[i])
        order = np.lexsort((-rows, -vals))[:K]
        idx[i], scores[i] = rows[order], vals[order]
    return idx, scores


def faiss_check(path: str, count: int, n: int, factory: str, nprobe: int | None, ef_search: int | None) -> None:
    """Build (then reload from its cache file) a faiss index over the first ``n`` rows; recall@10
    against exact search and the build / cached-load seconds."""
    import tempfile

    from retrievers.dense.exact import exact_search
    from retrievers.dense.faiss_index import FaissIndex

    docs = np.load(path, mmap_mode="r")[:n]
    q = queries_for(docs.shape[0], docs.shape[1], count, path)
    rank = np.arange(n)
    exact = exact_search(q, docs, K, rank)[0]
    with tempfile.TemporaryDirectory() as folder:
        cache = f"{folder}/faiss.index"
        built = FaissIndex(docs, True, factory, nprobe=nprobe, ef_search=ef_search, cache_path=cache)
        loaded = FaissIndex(docs, True, factory, nprobe=nprobe, ef_search=ef_search, cache_path=cache)
        size = os.path.getsize(cache)
        started = time.perf_counter()
        idx = loaded.search(q, K, rank)[0]
        seconds = time.perf_counter() - started
    recall = np.mean([len(set(a) & set(b)) / K for a, b in zip(idx.tolist(), exact.tolist())])
    print(f"faiss {factory} over {n} docs ({built.stats()}): built in {built.seconds:.1f} s, "
          f"cache {loaded.cache} loaded in {loaded.seconds:.2f} s ({size / 2**20:.0f} MiB), "
          f"{count} queries in {seconds:.2f} s, recall@{K} vs exact {recall:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--path", default="/tmp/dense_scale.npy")
    parser.add_argument("--keep", action="store_true", help="keep the embeddings file (reused when its shape fits)")
    parser.add_argument("--faiss", metavar="FACTORY", help="also build, cache and reload this faiss index")
    parser.add_argument("--faiss-docs", type=int, default=200_000, help="rows the faiss index covers")
    parser.add_argument("--nprobe", type=int)
    parser.add_argument("--ef-search", type=int)
    parser.add_argument("--phase", choices=["make", "search"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "make":
        return make(args.path, args.docs, args.dim)
    if args.phase == "search":
        return search(args.path, args.out)
    me = [sys.executable, __file__, "--path", args.path, "--docs", str(args.docs), "--dim", str(args.dim),
          "--queries", str(args.queries)]
    try:
        existing = np.load(args.path, mmap_mode="r").shape if os.path.exists(args.path) else None
        if existing != (args.docs, args.dim):
            started = time.perf_counter()
            subprocess.run(me + ["--phase", "make"], check=True)
            print(f"wrote {args.path} ({args.docs} x {args.dim} float32) in {time.perf_counter() - started:.1f} s")
        out = args.path + ".result.npz"
        q = queries_for(args.docs, args.dim, args.queries, args.path)
        np.save(out + ".queries.npy", q)
        line = subprocess.run(me + ["--phase", "search", "--out", out], check=True, capture_output=True,
                              text=True).stdout.strip().splitlines()[-1]
        got = json.loads(line)
        result = np.load(out)
        os.unlink(out)
        os.unlink(out + ".queries.npy")
        gib = 2.0 ** 30
        print(f"exact_search: {args.queries} queries x {args.docs} docs x {args.dim}, top {K}: {got['seconds']} s")
        print(f"mapped file: {got['mapped_bytes'] / gib:.2f} GiB")
        print(f"search process peak RSS (ru_maxrss): {got['ru_maxrss'] / gib:.3f} GiB; "
              f"VmHWM {got['after']['VmHWM'] / gib:.3f} GiB")
        print(f"  sampled peaks during the search: RssAnon {got['sampled_peaks']['RssAnon'] / gib:.3f} GiB, "
              f"RssFile {got['sampled_peaks']['RssFile'] / gib:.3f} GiB")
        print(f"  before search: VmHWM {got['before']['VmHWM'] / gib:.3f} GiB, "
              f"RssAnon {got['before']['RssAnon'] / gib:.3f} GiB, "
              f"RssFile {got['before']['RssFile'] / gib:.3f} GiB")
        print(f"  after search:  RssAnon {got['after']['RssAnon'] / gib:.3f} GiB, "
              f"RssFile {got['after']['RssFile'] / gib:.3f} GiB")
        started = time.perf_counter()
        ref_idx, ref_scores = reference(args.path, q, args.docs)
        print(f"brute-force reference: {time.perf_counter() - started:.1f} s")
        same_idx = np.array_equal(result["idx"], ref_idx)
        ulps = np.abs(result["scores"].view(np.int32).astype(np.int64) - ref_scores.view(np.int32))
        ties = int(np.sum(result["scores"][:, :-1] == result["scores"][:, 1:]))
        print(f"top-{K} identical to the reference: indices {same_idx}, scores {not ulps.any()} "
              f"({int((ulps > 0).sum()):,} of {ulps.size:,} scores differ, by at most {int(ulps.max())} float32 ulps; "
              f"{ties} exactly tied adjacent pairs in the results)")
        if not same_idx or ulps.max() > MAX_ULPS:
            sys.exit(1)
        if args.faiss:
            faiss_check(args.path, args.queries, min(args.faiss_docs, args.docs), args.faiss, args.nprobe,
                        args.ef_search)
    finally:
        if not args.keep and os.path.exists(args.path):
            os.unlink(args.path)


if __name__ == "__main__":
    main()
