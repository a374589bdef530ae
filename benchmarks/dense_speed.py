"""Encode speed of the dense retriever vs raw ``SentenceTransformer.encode``, and the cached rerun.

On the same N SciFact documents (default 500, title + " " + text as MTEB joins them), in one run:

* raw:     ``model.encode(texts, batch_size=B)`` on a loaded SentenceTransformer;
* harness: ``DenseRetriever.index(corpus)`` with an empty cache (encode + cache writes), using the
           same loaded model object (model loading is excluded from both);
* cached:  a new ``DenseRetriever`` (same settings) indexing the same corpus again: cache hit.

Raw and harness alternate ``--repeat`` times (taking turns at going first); the best time of each
is compared. The harness's own overhead (index time minus time inside ``encode``) is printed too. Targets:
harness/raw throughput >= 0.95, cached rerun >= 50x faster than the first run.

    PYTHONPATH=. python benchmarks/dense_speed.py [--docs 500] [--batch-size 32] [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from harness.datasets import load_dataset  # noqa: E402
from harness.datasets.corpus import Corpus  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.dense.texts import document_texts  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)

    full = load_dataset("scifact").corpus
    n = min(args.docs, len(full))
    corpus = Corpus(full.ids[:n], full.titles[:n], full.texts[:n])
    texts = document_texts(corpus)

    with tempfile.TemporaryDirectory(prefix="dense-speed-") as cache:
        def retriever() -> DenseRetriever:
            return DenseRetriever(batch_size=args.batch_size, device=args.device, cache_dir=cache, progress=False)

        first = retriever()
        model = first.model.load()  # shared by both sides; loading is not timed
        model.encode(texts[:64], batch_size=args.batch_size)  # warm-up
        raw_times, ours_times, overheads = [], [], []
        raw = ours = None

        def time_raw():
            nonlocal raw
            started = time.perf_counter()
            raw = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False)
            raw_times.append(time.perf_counter() - started)

        def time_ours(attempt):
            nonlocal ours
            for entry in Path(cache).glob("documents-*"):  # empty cache for every timed first run
                for f in entry.iterdir():
                    f.unlink()
                entry.rmdir()
            r = first if attempt == 0 else retriever()
            r.model = first.model
            started = time.perf_counter()
            r.index(corpus)
            ours_times.append(time.perf_counter() - started)
            overheads.append(ours_times[-1] - r.stats()["documents_encode_seconds"])
            ours = np.asarray(r._docs)

        for attempt in range(args.repeat):  # alternate who goes first, so drift favours neither
            if attempt % 2 == 0:
                time_raw()
                time_ours(attempt)
            else:
                time_ours(attempt)
                time_raw()

        second = retriever()
        started = time.perf_counter()
        second.index(corpus)
        cached_time = time.perf_counter() - started
        assert second.stats()["documents_cache"] == "hit", second.stats()

    raw_best, ours_best = min(raw_times), min(ours_times)
    print(f"{n} SciFact documents, batch size {args.batch_size}, device {first.model.device}, "
          f"max_seq_length {first.max_seq_length}, best of {args.repeat}")
    print(f"raw SentenceTransformer.encode : {raw_best:8.2f} s  ({n / raw_best:7.1f} docs/s)  all: "
          f"{', '.join(f'{t:.2f}' for t in raw_times)}")
    print(f"DenseRetriever.index (no cache): {ours_best:8.2f} s  ({n / ours_best:7.1f} docs/s)  all: "
          f"{', '.join(f'{t:.2f}' for t in ours_times)}")
    print(f"harness overhead (not encoding): {max(overheads):8.4f} s at most")
    print(f"DenseRetriever.index (cached)  : {cached_time:8.4f} s")
    print(f"throughput harness/raw         : {raw_best / ours_best:8.3f}x  (target >= 0.95)")
    print(f"cached rerun speed-up          : {ours_best / cached_time:8.1f}x  (target >= 50)")
    print(f"max |embedding difference|     : {float(np.abs(ours - raw).max()):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
