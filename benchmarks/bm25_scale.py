"""BM25 at scale on synthetic corpora: index time, query time and peak RSS vs raw bm25s.

    PYTHONPATH=. python benchmarks/bm25_scale.py --sizes 10000 100000 [1000000] [--queries 1000]
        [--systems project bm25s] [--json out.json]

Corpus: a seeded Zipfian vocabulary (``--vocab`` distinct made-up words, P(rank r) ~ 1/r^1.07,
as word frequencies in English text) and log-normal document lengths (median 55 words, mean ~62,
long tail; MS MARCO passages have a similar profile). Queries: 2-6 words drawn from the same law
below the 50 most frequent words. Each (system, size) runs in a fresh subprocess so that its peak
RSS (ru_maxrss, which includes the ~0.5 GB of corpus text at 1M documents) is its own; the corpus
generation is not timed.

* project: ``BM25Retriever(cache=False)`` (Lucene analyzer; streamed, chunked encoding) index + search;
* bm25s: ``bm25s.tokenize`` (porter, Lucene's stopwords) + ``BM25(method="lucene").index`` +
  ``retrieve(n_threads=2)``;
* rank-bm25 (only when named in ``--systems``; slow): ``BM25Retriever(backend="rank-bm25")``.

Targets (issue 8) at 1M documents: project <= 1.2x bm25s's time, <= 4 GB peak RSS, near-linear growth.
The 1M size takes minutes per system: run it by hand, once; tests and CI never do.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("DISABLE_TQDM", "1")


def make_words(n: int, rng) -> list[str]:
    import numpy as np

    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n:
        lengths = rng.integers(3, 11, size=n)
        chars = letters[rng.integers(0, 26, size=(n, 10))]
        for row, length in zip(chars, lengths):
            w = row[:length].tobytes().decode()
            if w not in seen:
                seen.add(w)
                words.append(w)
                if len(words) == n:
                    break
    return words


def zipf_sampler(n_vocab: int, s: float, rng, offset: int = 0):
    import numpy as np

    weights = 1.0 / np.arange(1 + offset, n_vocab + 1, dtype=np.float64) ** s
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return lambda size: np.searchsorted(cdf, rng.random(size)) + offset


def synthetic(n_docs: int, n_queries: int, n_vocab: int, seed: int = 0):
    import numpy as np

    from harness.datasets.corpus import Corpus, Queries

    rng = np.random.default_rng(seed)
    words = np.array(make_words(n_vocab, rng), dtype=object)
    draw = zipf_sampler(n_vocab, 1.07, rng)
    texts: list[str] = []
    for start in range(0, n_docs, 50_000):
        n = min(50_000, n_docs - start)
        lengths = np.maximum(1, rng.lognormal(np.log(55), 0.5, size=n).astype(np.int64))
        flat = words[draw(int(lengths.sum()))]
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        texts.extend(" ".join(flat[a:b]) for a, b in zip(bounds[:-1], bounds[1:]))
    query_draw = zipf_sampler(n_vocab, 1.07, rng, offset=50)
    queries = [" ".join(words[query_draw(int(rng.integers(2, 7)))]) for _ in range(n_queries)]
    corpus = Corpus([str(i) for i in range(n_docs)], [""] * n_docs, texts)
    return corpus, Queries([f"q{i}" for i in range(n_queries)], queries)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(system: str, n_docs: int, n_queries: int, n_vocab: int, k: int) -> dict:
    corpus, queries = synthetic(n_docs, n_queries, n_vocab)
    rss_corpus = peak_rss_mb()
    if system == "project":
        from retrievers.bm25 import BM25Retriever

        t0 = time.perf_counter()
        retriever = BM25Retriever(cache=False)
        retriever.index(corpus)
        t1 = time.perf_counter()
        run = retriever.search(queries, k)
        t2 = time.perf_counter()
        n_results = len(run)
    elif system == "bm25s":
        import bm25s
        import Stemmer

        from retrievers.bm25.analyzer import LUCENE_ENGLISH_STOPWORDS

        stop = sorted(LUCENE_ENGLISH_STOPWORDS)
        t0 = time.perf_counter()
        stemmer = Stemmer.Stemmer("porter")
        tokens = bm25s.tokenize(corpus.texts, stopwords=stop, stemmer=stemmer, show_progress=False)
        model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
        model.index(tokens, show_progress=False)
        del tokens
        t1 = time.perf_counter()
        q = bm25s.tokenize(queries.texts, stopwords=stop, stemmer=stemmer, show_progress=False)
        docs, _ = model.retrieve(q, k=min(k, n_docs), show_progress=False, n_threads=2)
        t2 = time.perf_counter()
        n_results = int(docs.size)
    elif system == "rank-bm25":
        from retrievers.bm25 import BM25Retriever

        t0 = time.perf_counter()
        retriever = BM25Retriever(backend="rank-bm25")
        retriever.index(corpus)
        t1 = time.perf_counter()
        n_results = len(retriever.search(queries, k))
        t2 = time.perf_counter()
    else:
        raise SystemExit(f"unknown system {system}")
    return {"system": system, "n_docs": n_docs, "n_queries": n_queries, "index_s": t1 - t0, "search_s": t2 - t1,
            "total_s": t2 - t0, "peak_rss_mb": peak_rss_mb(), "rss_after_corpus_mb": rss_corpus,
            "results": n_results}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--systems", nargs="+", default=["project", "bm25s"])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--vocab", type=int, default=500_000)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--json", default=None, help="also write the measurements here")
    parser.add_argument("--worker", nargs=2, metavar=("SYSTEM", "N_DOCS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), args.queries, args.vocab, args.k)))
        return

    rows = []
    for n in args.sizes:
        for system in args.systems:
            proc = subprocess.run([sys.executable, __file__, "--worker", system, str(n), "--queries", str(args.queries),
                                   "--vocab", str(args.vocab), "--k", str(args.k)], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
            if proc.returncode != 0:
                print(f"{system} at {n}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{system:8s} {n:>9,d} docs: index {row['index_s']:8.2f}s  search {row['search_s']:7.2f}s "
                  f"({args.queries} q)  total {row['total_s']:8.2f}s  peak RSS {row['peak_rss_mb']:7.0f} MB "
                  f"(corpus alone {row['rss_after_corpus_mb']:.0f} MB)", flush=True)

    by = {(r["system"], r["n_docs"]): r for r in rows}
    print()
    for n in args.sizes:
        p, r = by.get(("project", n)), by.get(("rank-bm25", n))
        if p and r:
            print(f"rank-bm25 / project at {n:,d}: index {r['index_s'] / p['index_s']:.1f}x  "
                  f"search {r['search_s'] / p['search_s']:.1f}x  total {r['total_s'] / p['total_s']:.1f}x slower")
    print("ratios project / bm25s (time; < 1 means faster):")
    for n in args.sizes:
        p, b = by.get(("project", n)), by.get(("bm25s", n))
        if p and b:
            print(f"  {n:>9,d}: index {p['index_s'] / b['index_s']:.2f}x  search {p['search_s'] / b['search_s']:.2f}x  "
                  f"total {p['total_s'] / b['total_s']:.2f}x  peak RSS {p['peak_rss_mb'] / b['peak_rss_mb']:.2f}x")
    print("growth between consecutive sizes (time ratio / size ratio; 1.0 = linear):")
    for system in args.systems:
        sizes = [n for n in args.sizes if (system, n) in by]
        for a, b in zip(sizes, sizes[1:]):
            ra, rb = by[(system, a)], by[(system, b)]
            scale = b / a
            print(f"  {system:8s} {a:,d} -> {b:,d}: index x{rb['index_s'] / ra['index_s']:.1f} "
                  f"({rb['index_s'] / ra['index_s'] / scale:.2f}), search x{rb['search_s'] / ra['search_s']:.1f}, "
                  f"peak RSS x{rb['peak_rss_mb'] / ra['peak_rss_mb']:.1f}")
    if args.json:
        from harness.atomic import write_json

        write_json(args.json, rows)


if __name__ == "__main__":
    main()
