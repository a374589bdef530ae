"""Corpus loading at 1M documents, whole processes side by side: pyarrow.json alone vs the harness.

    PYTHONPATH=. python benchmarks/corpus_load.py [--docs 1000000] [--folder /tmp/harness-load-scale-zipf]
        [--gzip] [--line-scan] [--run] [--repeat N]

The BEIR folder is generated as benchmarks/load_scale.py does (once, reused; ``--gzip`` also writes
and then uses ``corpus.jsonl.gz``). Each row is one fresh interpreter, timed from start to exit
(imports included), with its own peak RSS (``os.wait4``):

* ``pyarrow.json``: ``pyarrow.json.read_json(<corpus file>)`` with default options: the anchor;
* ``pyarrow.json, harness options``: the harness's whole parse alone (``read_string_columns``: three string
  columns by explicit schema, other keys skipped, 2 MiB blocks, isal for ``.gz``), without validation or
  cache: what reads queries, and a corpus the compiled parse refuses;
* ``harness stream parse``: the corpus stream's parse alone (``stream_string_columns``: the compiled parse
  where it is built, harness/native/jsonrows.c), its batches dropped: no validation, no cache;
* ``harness load cold``: ``load_dataset(<folder>)`` with an empty ``$HARNESS_CACHE_DIR`` (parse,
  validate, write the Arrow corpus cache);
* ``harness load warm``: the same again (the Arrow cache is memory-mapped);
* ``--line-scan``: the line-by-line reader the loader used before (``json.loads`` per line), for scale;
* ``--run``: ``harness run --retriever bm25`` cold (empty cache dir) and warm (corpus and index
  cached), 1,000 queries: issue 15's end-to-end targets (cold <= 1.5x, warm <= 0.3x the anchor,
  cold peak RSS <= 2 GB). Minutes and several GB: run it by hand, once. Then ``floor``: the warm run's
  imports, cached corpus and index, and compiled search alone (nothing evaluated or written), which
  bounds from below what any warm run of the harness can take.

Each row also gives the process's CPU seconds (user + system, fastest of the repeats) and their
ratio to the anchor's: on this shared 2-core VM wall seconds move with the host's load, CPU seconds
less. Every process runs with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` dropped, the project
compiled once first), as an installed package runs. The machine is shared: read the ratios, which are taken in one run, rather than the seconds; with
``--repeat N`` every row runs N times, in N rounds of all the rows in turn (a cold row from an empty
cache each time), and shows its fastest time and largest peak RSS, which steadies the ratios on a busy
machine whose speed drifts: each row is measured across the same stretches of time as the anchor.
It then also gives every row's time against the same round's anchor, round by round, with their median
(the fastest times pair each row's best round with the anchor's, which may fall in another stretch).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_parent import floor_note, generate_in_child  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

ANCHOR = "import sys, pyarrow.json as pj; t = pj.read_json(sys.argv[1]); print(t.num_rows)"
STREAM = ("import sys; from pathlib import Path; from harness.datasets.jsonl import stream_string_columns; "
          "rows = []; stream_string_columns(Path(sys.argv[1]), ('_id', 'title', 'text'), "
          "lambda batch: rows.append(batch.num_rows)); print(sum(rows))")
TUNED = ("import sys; from pathlib import Path; from harness.datasets.jsonl import read_string_columns; "
         "print(read_string_columns(Path(sys.argv[1]), ('_id', 'title', 'text')).num_rows)")
LOAD = ("import sys; from harness.datasets import load_dataset; ds = load_dataset(sys.argv[1]); "
        "print(len(ds.corpus), ds.load_s)")
# the warm run's floor: what `harness run -r bm25` imports, the cached corpus and index, the compiled search of
# every query at the run's depth (1,000 + 1: identical ids are dropped); nothing evaluated or written
FLOOR = ("import sys, harness.cli.run; from harness import registry; from harness.datasets import load_dataset; "
         "ds = load_dataset(sys.argv[1]); r = registry.create('bm25'); r.index(ds.corpus); "
         "print(len(r.search(ds.queries, 1001).doc_codes))")
SCAN = "import sys; from pathlib import Path; from harness.datasets.beir import _scan_corpus; print(len(_scan_corpus(Path(sys.argv[1]))))"


def run_child(argv: list[str], env: dict) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS MiB, stdout, CPU seconds: user + system) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv)} failed:\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, out.strip(), usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/harness-load-scale-zipf"))
    parser.add_argument("--gzip", action="store_true", help="load corpus.jsonl.gz instead of corpus.jsonl")
    parser.add_argument("--line-scan", action="store_true", help="also time the line-by-line reader")
    parser.add_argument("--run", action="store_true", help="also time `harness run --retriever bm25` cold and warm")
    parser.add_argument("--repeat", type=int, default=1, help="runs per row: fastest time, largest peak RSS")
    args = parser.parse_args()
    folder = args.folder / f"{args.docs}"
    if not (folder / "corpus.jsonl").is_file() and not (folder / "corpus.jsonl.gz").is_file():
        generate_in_child("load_scale", folder, args.docs)  # (this process stays small: see fresh_parent)
    # The .gz lives in a folder of its own (<docs>-gz, queries and qrels hard-linked): a dataset folder holding
    # both corpus.jsonl and corpus.jsonl.gz is refused by the loader. (An earlier version of this script gzipped
    # beside corpus.jsonl: such a file is moved there.)
    gz_folder = args.folder / f"{args.docs}-gz"
    stray = folder / "corpus.jsonl.gz"
    if stray.is_file() and (folder / "corpus.jsonl").is_file():
        gz_folder.mkdir(parents=True, exist_ok=True)
        if (gz_folder / "corpus.jsonl.gz").exists():
            stray.unlink()
        else:
            os.replace(stray, gz_folder / "corpus.jsonl.gz")
    if args.gzip:
        (gz_folder / "qrels").mkdir(parents=True, exist_ok=True)
        if not (gz_folder / "corpus.jsonl.gz").is_file():
            part = gz_folder / "corpus.jsonl.gz.part"
            with open(folder / "corpus.jsonl", "rb") as src, gzip.open(part, "wb", 6) as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
            os.replace(part, gz_folder / "corpus.jsonl.gz")
        for name in ("queries.jsonl", "qrels/test.tsv"):
            if not (gz_folder / name).exists():
                os.link(folder / name, gz_folder / name)
        folder = gz_folder
    corpus = folder / ("corpus.jsonl.gz" if args.gzip else "corpus.jsonl")
    print(f"{corpus}: {args.docs:,} documents, {corpus.stat().st_size / 2**20:,.0f} MiB")

    cache = Path(tempfile.mkdtemp(prefix="harness-corpus-load-"))
    env = dict(os.environ, PYTHONPATH=str(REPO), HARNESS_CACHE_DIR=str(cache), DISABLE_TQDM="1")
    # Python as installed for a user: the project's modules byte-compiled once, as pyarrow's are in
    # site-packages (a PYTHONDONTWRITEBYTECODE=1 shell would recompile ~75 modules, ~0.1 s, per process)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = sys.executable
    subprocess.run([py, "-m", "compileall", "-q", str(REPO / "harness"), str(REPO / "retrievers")], env=env,
                   check=False, stdout=subprocess.DEVNULL)
    plan: list[tuple[str, list[str], bool]] = [  # (label, argv, cold: from an empty cache directory)
        ("pyarrow.json (anchor)", [py, "-c", ANCHOR, str(corpus)], False),
        ("pyarrow.json, harness options", [py, "-c", TUNED, str(corpus)], False),
        ("harness stream parse", [py, "-c", STREAM, str(corpus)], False),
        ("harness load cold", [py, "-c", LOAD, str(folder)], True),
        ("harness load warm", [py, "-c", LOAD, str(folder)], False)]
    if args.line_scan:
        plan.append(("line scan (json.loads)", [py, "-c", SCAN, str(corpus)], False))
    if args.run:
        harness = [str(Path(py).with_name("harness")), "run", "-d", str(folder), "-r", "bm25", "-o",
                   str(cache / "results"), "-q"]
        plan += [("harness run bm25 cold", harness + ["--name", "cold"], True),
                 ("harness run bm25 warm", harness + ["--name", "warm"], False),
                 ("  floor: imports + search", [py, "-c", FLOOR, str(folder)], False)]
    # --repeat N runs N rounds of every row in turn (not N runs of one row, then of the next): the machine's
    # speed drifts over minutes here, and a row's runs all taken in a slow (or fast) stretch moved its ratio
    taken: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _, _ in plan}
    try:
        for round_ in range(max(1, args.repeat)):
            for label, argv, cold in plan:
                if cold:  # an empty cache directory
                    shutil.rmtree(cache)
                    cache.mkdir()
                seconds, peak, _, cpu = run_child(argv, env)
                taken[label].append((seconds, peak, cpu))
            print(f"  round {round_ + 1}: " + ", ".join(f"{label.strip()} {taken[label][-1][0]:.2f} s"
                                                       for label, _, _ in plan), flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    rows: list[tuple[str, float, float, float]] = []
    for label, _, _ in plan:
        times, peaks, cpus = zip(*taken[label])
        rows.append((label, min(times), max(peaks), min(cpus)))
        print(f"  {label:<28} {' '.join(f'{t:.2f}' for t in times)} s (CPU {' '.join(f'{c:.2f}' for c in cpus)} s)"
              f"  {max(peaks):8,.0f} MiB")

    anchor = rows[0][1]
    anchor_cpu = rows[0][3]
    print(f"\n{'process':<28} {'seconds':>8} {'x anchor':>9} {'peak RSS MiB':>13} {'CPU s':>7} {'x anchor':>9}")
    for label, seconds, peak, cpu in rows:
        print(f"{label:<28} {seconds:8.2f} {seconds / anchor:8.2f}x {peak:13,.0f} {cpu:7.2f} {cpu / anchor_cpu:8.2f}x")
    if len(taken[plan[0][0]]) > 1:
        print("\n" + paired_ratios(taken, [label for label, _, _ in plan]))
    note = floor_note([peak for _, _, peak, _ in rows])
    if note:
        print(note)


def paired_ratios(taken: dict[str, list[tuple[float, float, float]]], labels: list[str]) -> str:
    """Each row's seconds against the same round's anchor, round by round, and their median. The fastest
    times above pair each row's best round with the anchor's best, which may fall in another stretch of
    time: on 2026-11-29 the anchor's rounds spread over 2.37-2.94 s while the cold run's stayed at 3.93-4.61 s."""
    from statistics import median

    anchor = [seconds for seconds, _, _ in taken[labels[0]]]
    lines = ["per round, x that round's anchor (median):"]
    for label in labels[1:]:
        ratios = [seconds / base for (seconds, _, _), base in zip(taken[label], anchor)]
        lines.append(f"  {label.strip():<28} {' '.join(f'{r:.2f}x' for r in ratios)}  ({median(ratios):.2f}x)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
