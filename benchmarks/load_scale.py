"""Load a synthetic 1M-document BEIR folder: time and peak memory, harness vs a BEIR-style loader.

    PYTHONPATH=. python benchmarks/load_scale.py [--docs 1000000] [--folder /tmp/harness-load-scale-zipf]

The folder (corpus.jsonl, queries.jsonl, qrels/test.tsv; uncompressed, as BEIR ships them) is
generated once and reused. Each loader runs in its own fresh interpreter so that peak RSS
(``ru_maxrss``) belongs to that loader alone; we report peak RSS and its growth over the
interpreter's RSS after imports, against the target of < 2x the corpus file size.

The anchor is BEIR's way of loading a corpus (``beir.datasets.data_loader.GenericDataLoader``:
one ``json.loads`` per line into ``{doc_id: {"title": ..., "text": ...}}``), re-implemented here in
a few lines because the ``beir`` package is not installed in this environment.

The synthetic corpus (:func:`generate`, also used by benchmarks/corpus_load.py) has a realistic
vocabulary, because search cost depends on it. Words are drawn i.i.d. from a Zipf distribution
over ``VOCABULARY`` = 300,000 word types, P(rank r) proportional to 1 / r**1.05 (natural text has an
exponent near 1). Ranks 1-89 are real English function words (``STOPWORDS``, in rough frequency
order: "the" is ~10% of the tokens, ~6% in English; Lucene's 33 stopwords are among them); the
other ranks are made-up words of letter syllables (consonant + vowel), two syllables for the next
8,100 ranks, three after that, so rarer words are longer. Titles have 3 + Poisson(4) words (mean 7),
texts a log-normal number of words (median 55, sigma 0.6: mean ~66, 1% above ~220, cut to 8..1,500)
and end with a period; one document in 20 starts its text with a non-ASCII word (stored \\u-escaped,
as BEIR's files are). At 1M documents that is ~73M tokens and ~300k distinct words (a real corpus
of this size has a few hundred thousand), and a content word of rank 1,000 is in ~0.5% of the
documents. The 1,000 queries are written from 1-3 relevant documents each (the qrels, grade 1):
5-10 words, of which 1-3 common words (ranks 1-200, by the Zipf law) and the rest content words
picked uniformly among the distinct words of rank > 89 of the relevant documents' texts, which
favours mid-frequency terms as real queries do.

This replaces a generator that drew every word from a 71-word list: each query term then occurred
in ~65% of the documents and 1,000 BM25 queries touched ~5 billion postings at 1M documents, a
search cost no real corpus has.
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

import numpy as np

VOCABULARY = 300_000
ZIPF_EXPONENT = 1.05
STOPWORDS = ("the of and to in a is for that with on as by are was this be from at or an which it were "
             "have not has can been we these their also than its but our other all two more between both "
             "may after used there such into only most when however each one they well using during "
             "while over within about no if how what who then will through under first new high had "
             "would could should same where some any very those further here per three").split()
NON_ASCII = ["naïve", "café", "β-catenin", "Müller", "α-synuclein"]
N_QUERIES = 1000
_CHUNK = 100_000  # documents generated per vectorized step


def vocabulary() -> list[str]:
    """The ``VOCABULARY`` word types by rank (rank 1 first), then the \\u-escaped non-ASCII words."""
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]  # 90
    n = len(syllables)
    two = [syllables[i // n] + syllables[i % n] for i in np.random.default_rng(1).permutation(n * n)]
    two = [w for w in two if w not in STOPWORDS]  # "have", "here", "more", ...
    codes = np.random.default_rng(2).choice(n ** 3, VOCABULARY - len(STOPWORDS) - len(two), replace=False)
    three = [syllables[c // (n * n)] + syllables[c // n % n] + syllables[c % n] for c in codes.tolist()]
    return STOPWORDS + two + three + [json.dumps(w)[1:-1] for w in NON_ASCII]


def generate(folder: Path, n_docs: int, seed: int = 0) -> None:
    """Write a BEIR folder with ``n_docs`` Zipf-worded documents and ``N_QUERIES`` queries (module doc)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    words = pa.array(vocabulary(), pa.string())
    cdf = np.cumsum(1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_EXPONENT)
    cdf /= cdf[-1]

    def draw(count: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cdf, rng.random(count), side="right"), VOCABULARY - 1).astype(np.int32)

    def join(tokens: np.ndarray, lengths: np.ndarray) -> pa.Array:
        offsets = np.zeros(len(lengths) + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        return pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), words.take(pa.array(tokens))), " ")

    n_relevant = np.minimum(1 + rng.binomial(2, 0.25, N_QUERIES), n_docs)
    relevant = rng.choice(n_docs, min(int(n_relevant.sum()), n_docs), replace=False)
    wanted = set(relevant.tolist())
    texts_of: dict[int, np.ndarray] = {}
    tmp = folder / "corpus.jsonl.tmp"
    with open(tmp, "wb") as handle:
        for first in range(0, n_docs, _CHUNK):
            n = min(_CHUNK, n_docs - first)
            title_len = np.minimum(3 + rng.poisson(4, n), 20)
            text_len = np.clip(np.rint(rng.lognormal(np.log(55), 0.6, n)), 8, 1500).astype(np.int64)
            titles = join(draw(int(title_len.sum())), title_len)
            tokens = draw(int(text_len.sum()))
            starts = np.concatenate(([0], np.cumsum(text_len)[:-1]))
            ids = np.arange(first, first + n)
            marked = ids % 20 == 0  # 5% of documents start with a non-ASCII word
            tokens[starts[marked]] = VOCABULARY + (ids[marked] // 20) % len(NON_ASCII)
            for doc in wanted.intersection(range(first, first + n)):
                texts_of[doc] = tokens[starts[doc - first]:starts[doc - first] + text_len[doc - first]]
            lines = pc.binary_join_element_wise(
                '{"_id": "doc', pa.array(ids.astype(str)), '", "title": "', titles, '", "text": "',
                join(tokens, text_len), '.", "metadata": {}}\n', "")
            offsets = np.frombuffer(lines.buffers()[1], np.int32)[lines.offset:lines.offset + n + 1]
            handle.write(memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]])
    os.replace(tmp, folder / "corpus.jsonl")

    vocab = words.to_pylist()
    common = cdf[199] if VOCABULARY > 200 else 1.0
    queries, qrels, at = [], [], 0
    for q in range(N_QUERIES):
        docs = relevant[at:at + n_relevant[q]].tolist() if at < len(relevant) else [int(rng.integers(n_docs))]
        at += n_relevant[q]
        pool = np.unique(np.concatenate([texts_of.get(d, np.zeros(0, np.int32)) for d in docs]))
        pool = pool[(pool >= len(STOPWORDS)) & (pool < VOCABULARY)]
        length = int(rng.integers(5, 11))
        n_common = min(int(rng.integers(1, 4)), length)
        content = rng.choice(pool, min(length - n_common, len(pool)), replace=False) if len(pool) else pool
        stop = np.searchsorted(cdf, rng.random(n_common) * common, side="right")
        terms = np.concatenate([content, stop]).astype(np.int64)
        rng.shuffle(terms)
        queries.append(json.dumps({"_id": f"q{q}", "text": " ".join(vocab[t] for t in terms.tolist())}) + "\n")
        qrels.extend(f"q{q}\tdoc{d}\t1\n" for d in docs)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(queries)
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        handle.writelines(qrels)


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
    """One loader in a fresh interpreter; the harness with an empty cache directory of its own (a cold
    load: parse, checks, Arrow cache written), never the user's cache."""
    with tempfile.TemporaryDirectory(prefix="harness-load-scale-") as cache:
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), HARNESS_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", CHILD, which, str(folder)], env=env, check=True,
                             capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/harness-load-scale-zipf"))
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
