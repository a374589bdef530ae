"""Load a synthetic 1M-document BEIR folder: time and peak memory, harness vs a BEIR-style loader.

    PYTHONPATH=. python benchmarks/load_scale.py [--docs 1000000] [--folder /tmp/harness-load-scale]

The folder (corpus.jsonl, queries.jsonl, qrels/test.tsv; uncompressed, as BEIR ships them) is
generated once and reused. Each loader runs in its own fresh interpreter so that peak RSS
(``ru_maxrss``) belongs to that loader alone; we report peak RSS and its growth over the
interpreter's RSS after imports, against the target of < 2x the corpus file size.

The anchor is BEIR's way of loading a corpus (``beir.datasets.data_loader.GenericDataLoader``:
one ``json.loads`` per line into ``{doc_id: {"title": ..., "text": ...}}``), re-implemented here in
a few lines because the ``beir`` package is not installed in this environment.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("the of and to in is for that with on as by are this be from at or an which it was have not can "
         "protein cell patients study results treatment risk disease effect analysis data method model "
         "clinical gene expression increased levels associated compared significant response human "
         "using between after during function activity role factors however these high low").split()
NON_ASCII = ["naïve", "café", "β-catenin", "Müller", "α-synuclein"]


def generate(folder: Path, n_docs: int, seed: int = 0) -> None:
    """Write a BEIR folder with ``n_docs`` documents (~5-word titles, ~60-word texts)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    tmp = folder / "corpus.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        for i in range(n_docs):
            title = " ".join(rng.choices(WORDS, k=5))
            words = rng.choices(WORDS, k=rng.randint(30, 90))
            if i % 20 == 0:  # 5% of documents carry a non-ASCII word (stored \u-escaped, as BEIR's files)
                words[0] = rng.choice(NON_ASCII)
            handle.write(json.dumps({"_id": f"doc{i}", "title": title, "text": " ".join(words),
                                     "metadata": {}}) + "\n")
    os.replace(tmp, folder / "corpus.jsonl")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as handle:
        for q in range(1000):
            handle.write(json.dumps({"_id": f"q{q}", "text": " ".join(rng.choices(WORDS, k=8))}) + "\n")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in range(1000):
            handle.write(f"q{q}\tdoc{rng.randrange(n_docs)}\t1\n")


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
which, folder = sys.argv[1], Path(sys.argv[2])
if which == "harness":
    from harness.datasets.beir import load_corpus
base = rss_kb()
start = time.perf_counter()
if which == "harness":
    corpus = load_corpus(folder / "corpus.jsonl")
    n = len(corpus)
else:
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf8") as handle:
        for line in handle:
            line = json.loads(line)
            corpus[line.get("_id")] = {"text": line.get("text"), "title": line.get("title")}
    n = len(corpus)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"docs": n, "seconds": seconds, "base_kb": base, "peak_kb": peak, "end_kb": rss_kb()}))
"""


def measure(which: str, folder: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", CHILD, which, str(folder)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/harness-load-scale"))
    args = parser.parse_args()
    folder = args.folder / f"{args.docs}"
    if not (folder / "corpus.jsonl").is_file():
        start = time.perf_counter()
        generate(folder, args.docs)
        print(f"generated {folder} in {time.perf_counter() - start:.1f}s")
    size_mb = (folder / "corpus.jsonl").stat().st_size / 2**20
    print(f"corpus.jsonl: {args.docs:,} documents, {size_mb:,.0f} MiB (target: RSS growth < {2 * size_mb:,.0f} MiB)")
    results = {which: measure(which, folder) for which in ("harness", "beir-style")}
    print(f"{'loader':<12} {'seconds':>8} {'peak RSS MiB':>13} {'growth MiB':>11} {'growth/file':>12}")
    for which, r in results.items():
        growth = (r["peak_kb"] - r["base_kb"]) / 1024
        print(f"{which:<12} {r['seconds']:>8.2f} {r['peak_kb'] / 1024:>13,.0f} {growth:>11,.0f} "
              f"{growth / size_mb:>11.2f}x")
    h, b = results["harness"], results["beir-style"]
    print(f"time ratio harness/beir-style: {h['seconds'] / b['seconds']:.2f}; "
          f"peak RSS ratio: {h['peak_kb'] / b['peak_kb']:.2f}")


if __name__ == "__main__":
    main()
