"""Index + search time of BM25 on a BEIR dataset: this project's lucene backend vs raw bm25s vs rank-bm25
(vs Lucene through Pyserini when its venv is given), in one run.

    PYTHONPATH=. python benchmarks/bm25_speed.py [--dataset scifact] [--repeats 3] [--k 1000]
        [--pyserini-python /work/venv-pyserini/bin/python] [--breakdown]

Every system gets the same corpus (title + " " + text), queries and depth; times are the best of
``--repeats`` interleaved rounds (the machine is shared, so the minimum is the least disturbed;
rank-bm25 runs in the first ``--rank-bm25-repeats`` rounds only, Lucene once), measured from raw
texts to ranked results:

* project: ``BM25Retriever(backend="lucene", cache=False)``: analyze + build + search (the cache is
  off so the build is timed; a cached second run is timed separately as "project, cache hit"),
  on the compiled path (retrievers/bm25/native/), and again with ``HARNESS_BM25_COMPILED=0``
  ("project, Python path");
* raw bm25s: ``bm25s.tokenize`` (PyStemmer porter, Lucene's 33 stopwords) + ``BM25(k1, b,
  method="lucene")`` + ``retrieve(k, n_threads=2)``;
* rank-bm25: ``BM25Retriever(backend="rank-bm25")`` (the same analyzer; BM25Okapi's loop per query);
* Lucene: Anserini 1.7.1 via benchmarks/lucene_peer.py in its own venv, index + search (its JVM
  start-up excluded; the collection is written to disk first, also excluded).

Targets (issue 8): project >= 80x faster than rank-bm25, <= 1.15x raw bm25s, >= 5x faster than Lucene.
``--breakdown`` also times the project's phases (compiled path: encode into the postings builder,
finish, score, search; Python path: texts, encode, build, search).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DISABLE_TQDM", "1")


def time_project(corpus, queries, k, python_path: bool = False, **kw) -> tuple[float, float]:
    """(index + search seconds, search seconds); ``python_path`` turns the compiled extension off."""
    if python_path:
        os.environ["HARNESS_BM25_COMPILED"] = "0"
    try:
        return _time_project(corpus, queries, k, **kw)
    finally:
        os.environ.pop("HARNESS_BM25_COMPILED", None)


def _time_project(corpus, queries, k, **kw) -> tuple[float, float]:
    from retrievers.bm25 import BM25Retriever

    t0 = time.perf_counter()
    retriever = BM25Retriever(backend="lucene", **kw)
    retriever.index(corpus)
    t1 = time.perf_counter()
    retriever.search(queries, k)
    t2 = time.perf_counter()
    return t2 - t0, t2 - t1


def time_raw_bm25s(corpus, queries, k, k1=0.9, b=0.4) -> float:
    import bm25s
    import Stemmer

    from retrievers.bm25.analyzer import LUCENE_ENGLISH_STOPWORDS

    t0 = time.perf_counter()
    stemmer = Stemmer.Stemmer("porter")
    docs = corpus.contents()
    tokens = bm25s.tokenize(docs, stopwords=sorted(LUCENE_ENGLISH_STOPWORDS), stemmer=stemmer, show_progress=False)
    del docs
    model = bm25s.BM25(k1=k1, b=b, method="lucene")
    model.index(tokens, show_progress=False)
    q = bm25s.tokenize(queries.texts, stopwords=sorted(LUCENE_ENGLISH_STOPWORDS), stemmer=stemmer, show_progress=False)
    model.retrieve(q, k=min(k, len(corpus)), show_progress=False, n_threads=2)
    return time.perf_counter() - t0


def time_rank_bm25(corpus, queries, k) -> tuple[float, float]:
    from retrievers.bm25 import BM25Retriever

    t0 = time.perf_counter()
    retriever = BM25Retriever(backend="rank-bm25")
    retriever.index(corpus)
    t1 = time.perf_counter()
    retriever.search(queries, k)
    t2 = time.perf_counter()
    return t2 - t0, t2 - t1


def breakdown(corpus, queries, k, repeats) -> None:
    """Where the project's cold time goes, best of ``repeats`` each. Compiled path: encoding the
    titles and texts straight into the postings builder, its finish (CSC order), scoring, search.
    Python path: building the texts, encoding them to term ids, building the scored index, search."""
    import numpy as np

    from retrievers.bm25 import BM25Retriever
    from retrievers.bm25.build import build_python
    from retrievers.bm25.encode import TermEncoder
    from retrievers.texts import corpus_chunks

    def best(fn):
        out = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - t0)
        return out

    retriever = BM25Retriever(backend="lucene", cache=False)
    backend, engine = retriever.backend, retriever.backend.engine
    retriever.index(corpus)
    search = ("search: all queries", lambda: retriever.search(queries, k))
    if engine.compiled and engine.encodes:
        from retrievers.bm25 import compiled
        from retrievers.bm25.build import index_from_postings

        chunks = [(titles, texts) for _, titles, texts in corpus_chunks(corpus, engine.chunk_docs)]
        times = {"encode": float("inf"), "finish": float("inf"), "score": float("inf")}
        for _ in range(repeats):  # the backend's build, phase by phase (compiled.index_postings + index_from_postings)
            t0 = time.perf_counter()
            encoder = compiled.CompiledTermEncoder(backend.analyzer, n_threads=backend.n_threads)
            builder = compiled._fastbm25.PostingsBuilder()  # noqa: SLF001
            for titles, texts in chunks:
                encoder.encode_into(builder, texts, titles)
            t1 = time.perf_counter()
            raw = builder.finish(len(encoder.terms), backend.n_threads)
            postings = [np.frombuffer(b, dtype=t) for b, t in zip(raw, (np.int64, np.int32, np.int32, np.int32))]
            t2 = time.perf_counter()
            index_from_postings(*postings, encoder.terms, backend.scoring, engine._score)
            t3 = time.perf_counter()
            for name, seconds in (("encode", t1 - t0), ("finish", t2 - t1), ("score", t3 - t2)):
                times[name] = min(times[name], seconds)
        rows = [("encode: texts -> postings (threads)", times["encode"]),
                ("finish: postings -> CSC order", times["finish"]),
                ("score: statistics + posting scores", times["score"]),
                (search[0], best(search[1]))]
        path = "compiled"
    else:
        batches = list(corpus.iter_contents(engine.chunk_docs))
        encoder = TermEncoder(backend.analyzer)
        encoded = [encoder.encode(batch) for batch in batches]

        def encode_all():
            e = TermEncoder(backend.analyzer)
            for batch in batches:
                e.encode(batch)

        rows = [("texts: title + ' ' + text", best(lambda: list(corpus.iter_contents(engine.chunk_docs)))),
                ("encode: texts -> term ids", best(encode_all)),
                ("build: postings -> CSC scores", best(lambda: build_python(iter(encoded), list(encoder.terms),
                                                                             backend.scoring))),
                (search[0], best(search[1]))]
        path = "pure Python"
    print(f"\nbreakdown of the project's cold time ({path} path, best of {repeats}):")
    for name, seconds in rows:
        print(f"  {name:38s} {seconds:7.3f} s")


def time_lucene(python: str, dataset_dir: Path, k: int) -> dict | None:
    script = Path(__file__).with_name("lucene_peer.py")
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([python, str(script), "run", str(dataset_dir), out, "--hits", str(k)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"Lucene peer failed: {proc.stderr[-2000:]}", file=sys.stderr)
            return None
        return json.loads((Path(out) / "timing.json").read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--rank-bm25-repeats", type=int, default=1, help="rank-bm25 is slow: fewer rounds")
    parser.add_argument("--pyserini-python", default=None, help="python of a venv with pyserini (optional)")
    parser.add_argument("--breakdown", action="store_true", help="also time the project's phases")
    args = parser.parse_args(argv)

    from harness.datasets import load_dataset, resolve

    dataset = load_dataset(args.dataset)
    corpus, queries = dataset.corpus, dataset.queries
    print(f"{dataset.name}: {len(corpus)} documents, {len(queries)} queries, depth {args.k}; "
          f"best of {args.repeats} rounds")

    from retrievers.bm25 import loader

    if loader.extension() is None:
        print("note: the compiled extension is not built (pip install -e . compiles it); timing the Python path")
    best = {"project": float("inf"), "project, Python path": float("inf"), "raw bm25s": float("inf"),
            "rank-bm25": float("inf")}
    search = {"project": float("inf"), "rank-bm25": float("inf")}
    for round_ in range(args.repeats):
        total, searching = time_project(corpus, queries, args.k, cache=False)
        best["project"], search["project"] = min(best["project"], total), min(search["project"], searching)
        best["project, Python path"] = min(best["project, Python path"],
                                           time_project(corpus, queries, args.k, python_path=True, cache=False)[0])
        best["raw bm25s"] = min(best["raw bm25s"], time_raw_bm25s(corpus, queries, args.k))
        if round_ < args.rank_bm25_repeats:
            total, searching = time_rank_bm25(corpus, queries, args.k)
            best["rank-bm25"], search["rank-bm25"] = min(best["rank-bm25"], total), min(search["rank-bm25"], searching)

    with tempfile.TemporaryDirectory() as cache_dir:
        time_project(corpus, queries, args.k, cache_dir=cache_dir)  # fills the cache
        best["project, cache hit"] = min(time_project(corpus, queries, args.k, cache_dir=cache_dir)[0]
                                         for _ in range(args.repeats))
    lucene = None
    if args.pyserini_python:
        lucene = time_lucene(args.pyserini_python, resolve(args.dataset)[1], args.k)
        if lucene:
            best["Lucene (Pyserini)"] = lucene["index_and_search_s"]

    project = best["project"]
    print(f"{'system':24s} {'seconds':>9s} {'vs project':>11s}")
    for name, seconds in best.items():
        print(f"{name:24s} {seconds:9.3f} {seconds / project:10.2f}x")
    print()
    print(f"rank-bm25 / project = {best['rank-bm25'] / project:.1f}x faster   (target >= 80x); "
          f"search alone: {search['rank-bm25']:.2f}s / {search['project']:.3f}s = "
          f"{search['rank-bm25'] / search['project']:.0f}x")
    print(f"project / raw bm25s = {project / best['raw bm25s']:.3f}x the time   (target <= 1.15x)")
    if lucene:
        print(f"Lucene / project    = {best['Lucene (Pyserini)'] / project:.1f}x faster   (target >= 5x; "
              f"Lucene index {lucene['index_s']:.2f}s + search {lucene['search_s']:.2f}s)")
    if args.breakdown:
        breakdown(corpus, queries, args.k, args.repeats)


if __name__ == "__main__":
    main()
