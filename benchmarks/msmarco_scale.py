"""BM25 at MS MARCO's shape: whole `harness run --retriever bm25` processes at 1M and 8.8M passages.

    PYTHONPATH=. python benchmarks/msmarco_scale.py [--docs 8841823] [--folder /tmp/harness-msmarco]
        [--skip-1m] [--keep]

Issue 15's target: 8.8M synthetic passages of MS MARCO's length distribution, 6,980 queries; the
whole run completes on the 24 GB machine with peak RSS <= 8 GB, and the per-document indexing cost
stays within 1.2x of the 1M rate (linear growth).

The BEIR folders (``<folder>/<N>/``: corpus.jsonl, queries.jsonl, qrels/test.tsv) are generated once
and reused (each written under a temporary name and renamed when complete), with numpy, a chunk of
documents at a time, without Python strings per word or document:

* passages: ids ``"0"`` .. ``"N-1"`` (MS MARCO's decimal ids), empty titles and ``"metadata": {}``
  as in BEIR's msmarco, lengths log-normal with mean 56 words and sd 25 (at least 3, at most 250);
* words: a Zipf vocabulary of :data:`VOCAB` types, P(rank r) ~ 1/r^1.05, whose first ranks are
  English stopwords (Lucene's set and a few more; ~40% of the tokens) and the rest words made of
  consonant-vowel syllables (uniquely decodable: distinct but for the 16 that spell a stopword);
* 6,980 queries of ~6 words (2-12): each word a stopword (p = 0.3) or a content word drawn from the
  same law below the stopwords; ids like MS MARCO's (distinct integers); ~1.1 judged passages each.

The corpus of the 1M folder is the first 1M passages of the full one (documents are drawn chunk by
chunk with seeds of their own), and the queries are the same. The 1M run goes before and after the
full one (the machine is shared: the two show how its load moved; the ratio uses their mean), each
``harness run`` one fresh process, cold (empty ``$HARNESS_CACHE_DIR``: parse, Arrow corpus cache,
index build and cache, search, run file), timed from start to exit with its peak RSS (``os.wait4``);
the indexing cost per document comes from its metrics.json (``timings.index_s`` / documents).
Minutes and several GB: run it by hand, once, in the background.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_parent import floor_note, generate_in_child  # noqa: E402

FULL_DOCS = 8_841_823  # MS MARCO passage corpus
N_QUERIES = 6_980  # MS MARCO dev/small
VOCAB = 1_000_000
ZIPF_S = 1.05
CHUNK_DOCS = 100_000
STOPWORDS = ("the of and to a in is that for it as was with be by on not he i this are or his from at which "
             "but have an they you were her she there been one all we their if has will can no its what "
             "when who so more these some into them than may then other would about only also out how up "
             "such could do time our two any most your first where after why many over very does did").split()
ONSETS = ("b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr pl pr sh st th tr".split())
NUCLEI = ("a e i o u ai ea ie io ou".split())


def vocabulary(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(bytes of every word, each preceded by a space, as uint8; start of each word's space), the
    words in rank order: the stopwords, then syllable words (rank i's syllables are the digits of
    i in base len(syllables), so frequent words are short and all are distinct)."""
    syllables = [o + v for o in ONSETS for v in NUCLEI]
    base = len(syllables)
    m = n - len(STOPWORDS)
    sizes = [base]
    while sum(sizes) < m:
        sizes.append(sizes[-1] * base)
    ends = np.cumsum(sizes)  # words of k syllables are ranks [ends[k-2], ends[k-1])
    words = [f" {w}".encode() for w in STOPWORDS]
    syl = np.array([s.encode() for s in syllables], dtype=f"S{max(map(len, syllables))}")
    index = np.arange(m, dtype=np.int64)
    n_syll = np.searchsorted(ends, index, side="right") + 1
    rel = index - np.concatenate([[0], ends[:-1]])[n_syll - 1]
    columns = []
    for k in range(int(n_syll.max())):
        digit = (rel // base ** k) % base
        columns.append(np.where(k < n_syll, syl[digit], b""))
    joined = columns[0]
    for col in columns[1:]:
        joined = np.char.add(col, joined)
    parts = [np.frombuffer(b"".join(words), dtype=np.uint8),
             np.frombuffer(b"".join(b" " + w for w in joined.tolist()), dtype=np.uint8)]
    lengths = np.concatenate([[len(w) for w in words], np.char.str_len(joined) + 1]).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.concatenate(parts), offsets


class Text:
    """Writes token-id sequences as JSON lines by one vectorised gather of byte segments."""

    def __init__(self, n_vocab: int):
        self.buffer, self.offsets = vocabulary(n_vocab)
        self.lengths = np.diff(np.concatenate([self.offsets, [len(self.buffer)]]))
        weights = 1.0 / np.arange(1, n_vocab + 1, dtype=np.float64) ** ZIPF_S
        self.cdf = np.cumsum(weights) / weights.sum()
        self.n_stop = len(STOPWORDS)
        content = weights[self.n_stop:]
        self.content_cdf = np.cumsum(content) / content.sum()

    def draw(self, rng, size: int) -> np.ndarray:
        return np.searchsorted(self.cdf, rng.random(size), side="right").astype(np.int64)

    def lines(self, prefixes: list[bytes], suffix: bytes, counts: np.ndarray, tokens: np.ndarray) -> bytes:
        """``prefix + words joined by single spaces + suffix`` per line."""
        n = len(counts)
        const = np.frombuffer(b"".join(prefixes) + suffix, dtype=np.uint8)
        pre_len = np.array([len(p) for p in prefixes], dtype=np.int64)
        pre_off = len(self.buffer) + np.concatenate([[0], np.cumsum(pre_len)[:-1]])
        src = np.concatenate([self.buffer, const])
        suf_off = len(src) - len(suffix)
        seg_per_line = counts + 2
        line_first = np.concatenate([[0], np.cumsum(seg_per_line)[:-1]])
        total = int(seg_per_line.sum())
        seg_off = np.empty(total, dtype=np.int64)
        seg_len = np.empty(total, dtype=np.int64)
        is_word = np.ones(total, dtype=bool)
        is_word[line_first] = False
        is_word[line_first + seg_per_line - 1] = False
        seg_off[is_word] = self.offsets[tokens]
        seg_len[is_word] = self.lengths[tokens]
        first_word = line_first[counts > 0] + 1  # no space before a line's first word
        seg_off[first_word] += 1
        seg_len[first_word] -= 1
        seg_off[line_first], seg_len[line_first] = pre_off, pre_len
        seg_off[line_first + seg_per_line - 1], seg_len[line_first + seg_per_line - 1] = suf_off, len(suffix)
        out_start = np.cumsum(seg_len) - seg_len
        gather = np.arange(int(seg_len.sum()), dtype=np.int64) + np.repeat(seg_off - out_start, seg_len)
        return src[gather].tobytes()


def passage_lengths(rng, n: int) -> np.ndarray:
    """Words per passage: log-normal, mean 56 and sd 25, clipped to [3, 250]."""
    sigma2 = np.log1p((25 / 56) ** 2)
    return np.clip(np.rint(rng.lognormal(np.log(56) - sigma2 / 2, np.sqrt(sigma2), n)), 3, 250).astype(np.int64)


def generate(folder: Path, n_docs: int, seed: int = 0) -> None:
    """Write the BEIR folder of ``n_docs`` passages atomically (a temporary folder renamed at the end)."""
    text = Text(VOCAB)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
    (tmp / "qrels").mkdir()
    with open(tmp / "corpus.jsonl", "wb") as handle:
        for start in range(0, n_docs, CHUNK_DOCS):
            rng = np.random.default_rng([seed, start])  # the first N of any larger corpus are the same
            n = min(CHUNK_DOCS, n_docs - start)
            counts = passage_lengths(rng, n)
            tokens = text.draw(rng, int(counts.sum()))
            prefixes = [b'{"_id": "%d", "title": "", "text": "' % i for i in range(start, start + n)]
            handle.write(text.lines(prefixes, b'", "metadata": {}}\n', counts, tokens))
    rng = np.random.default_rng([seed, 1 << 40])  # queries: the same whatever n_docs
    counts = np.clip(rng.poisson(4.0, N_QUERIES) + 2, 2, 12)
    stop = rng.random(int(counts.sum())) < 0.3
    tokens = np.where(stop, rng.integers(0, text.n_stop, len(stop)),
                      text.n_stop + np.searchsorted(text.content_cdf, rng.random(len(stop)), side="right"))
    qids = np.sort(rng.choice(1_200_000, N_QUERIES, replace=False))
    (tmp / "queries.jsonl").write_bytes(text.lines([b'{"_id": "%d", "text": "' % q for q in qids], b'"}\n',
                                                   counts, tokens))
    judged = 1 + (rng.random(N_QUERIES) < 0.1)
    docs = (rng.random(int(judged.sum())) * n_docs).astype(np.int64)
    with open(tmp / "qrels" / "test.tsv", "w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        handle.writelines(f"{q}\t{d}\t1\n" for q, d in zip(np.repeat(qids, judged).tolist(), docs.tolist()))
    os.replace(tmp, folder)


def run_child(argv: list[str], env: dict, log: Path) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one whole process; its output goes to ``log``."""
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv)} failed (status {status}):\n{log.read_text()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


def measure(folder: Path, n_docs: int, work: Path) -> dict:
    """One cold ``harness run -r bm25`` over ``folder``: wall seconds, peak RSS, metrics.json timings."""
    cache = work / f"cache-{n_docs}"
    out = work / f"out-{n_docs}"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    cache.mkdir(parents=True)
    env = dict(os.environ, HARNESS_CACHE_DIR=str(cache), DISABLE_TQDM="1",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    harness = str(Path(sys.executable).with_name("harness"))
    seconds, peak = run_child([harness, "run", "-d", str(folder), "-r", "bm25", "-o", str(out), "-q"], env,
                              work / f"run-{n_docs}.log")
    metrics = json.loads(next(out.rglob("metrics.json")).read_text())
    timings = metrics.get("timings", {})
    result = {"docs": n_docs, "seconds": seconds, "peak_mib": peak, "timings": timings}
    shutil.rmtree(cache, ignore_errors=True)  # several GB at full size
    shutil.rmtree(out, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=FULL_DOCS, help="passages of the full corpus")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/harness-msmarco"))
    parser.add_argument("--skip-1m", action="store_true", help="do not run the 1M prefix")
    parser.add_argument("--keep", action="store_true", help="keep the generated folders")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    small = not args.skip_1m and args.docs > 1_000_000
    # 1M before and after the full run: the machine is shared, and the two show how its load moved
    order = ([1_000_000] if small else []) + [args.docs] + ([1_000_000] if small else [])
    args.folder.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for n in order:
            folder = args.folder / str(n)
            if not (folder / "corpus.jsonl").is_file():
                start = time.perf_counter()
                generate_in_child("msmarco_scale", folder, n)  # (this process stays small: see fresh_parent)
                print(f"generated {folder} in {time.perf_counter() - start:.1f} s", flush=True)
            size = (folder / "corpus.jsonl").stat().st_size
            print(f"{folder}: {n:,} passages, corpus.jsonl {size / 2**20:,.0f} MiB; running...", flush=True)
            r = measure(folder, n, args.folder)
            r["corpus_mib"] = size / 2**20
            r["load_average"] = os.getloadavg()[0]
            t = r["timings"]
            r["index_us_per_doc"] = 1e6 * t.get("index_s", float("nan")) / n
            results.append(r)
            print(f"  {n:>10,} docs: {r['seconds']:8.1f} s, peak RSS {r['peak_mib']:8,.0f} MiB, "
                  f"index {t.get('index_s', float('nan')):.1f} s ({r['index_us_per_doc']:.2f} us/doc), "
                  f"timings {json.dumps(t)}", flush=True)
    finally:
        if not args.keep:
            for n in set(order):
                shutil.rmtree(args.folder / str(n), ignore_errors=True)
    print(f"\n{'documents':>10} {'corpus MiB':>11} {'seconds':>8} {'peak RSS MiB':>13} {'load s':>7} {'index s':>8} "
          f"{'us/doc':>7} {'search s':>9} {'load avg':>9}")
    for r in results:
        t = r["timings"]
        print(f"{r['docs']:>10,} {r['corpus_mib']:>11,.0f} {r['seconds']:>8.1f} {r['peak_mib']:>13,.0f} "
              f"{t.get('load_s', float('nan')):>7.1f} {t.get('index_s', float('nan')):>8.1f} "
              f"{r['index_us_per_doc']:>7.2f} {t.get('search_s', float('nan')):>9.1f} {r['load_average']:>9.2f}")
    note = floor_note([r["peak_mib"] for r in results])
    if note:
        print(note)
    full = next(r for r in results if r["docs"] == args.docs)
    print(f"peak RSS at {full['docs']:,}: {full['peak_mib'] * 2**20 / 1e9:.2f} GB = {full['peak_mib'] / 1024:.2f} GiB "
          f"(target <= 8 GB: {'met' if full['peak_mib'] * 2**20 <= 8e9 else 'NOT met'})")
    ones = [r["index_us_per_doc"] for r in results if r["docs"] == 1_000_000]
    if ones:
        ratio = full["index_us_per_doc"] / (sum(ones) / len(ones))
        print(f"indexing cost per document, {full['docs']:,} / 1M (mean of the 1M runs before and after): "
              f"{ratio:.2f}x (target <= 1.2x: {'met' if ratio <= 1.2 else 'NOT met'})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))

if __name__ == "__main__":
    main()
