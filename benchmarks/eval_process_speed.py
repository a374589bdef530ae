"""Whole-process evaluation speed: ``harness evaluate`` vs pytrec_eval, ir_measures and ranx, as users run them.

Each tool runs as its own process on the same generated files (an MS MARCO dev-shaped TREC run:
6,980 queries x 1,000 documents, ~240 MB, and qrels with ~1.1 relevant documents per query), from
interpreter start to exit: reading the files is part of the work. Wall time (best of ``--repeats``)
and peak RSS (``os.wait4``'s ``ru_maxrss`` of that process) are printed side by side with ratios.

    pytrec_eval  a plain script: the run and qrels parsed line by line into dicts, RelevanceEvaluator
    ir_measures  ir_measures.read_trec_qrels / read_trec_run + calc_aggregate
    ranx         Qrels.from_file / Run.from_file + evaluate (its numba functions compiled by an untimed
                 warm-up process first, so its compile cache is warm)
    harness      ``harness evaluate --qrels Q --run R`` (BEIR's six metric families at 6 cutoffs),
                 and again with ``--json`` (per-query values for every query written)

The anchors compute BEIR's four trec_eval measures (ndcg_cut, map_cut, recall, P) at the same
cutoffs; the project computes those plus MRR@k and R_cap@k. Files go to ``--dir`` (default under
/tmp; never in the repository) and are reused when present.

    python benchmarks/eval_process_speed.py [--dir /tmp/harness-eval-speed] [--repeats 3] [--queries 6980]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

K = "1,3,5,10,100,1000"

PYTREC = f"""
import sys, pytrec_eval
qrels, run = {{}}, {{}}
for line in open(sys.argv[1]):
    q, _, d, g = line.split()
    qrels.setdefault(q, {{}})[d] = int(g)
for line in open(sys.argv[2]):
    q, _, d, _, s, _ = line.split()
    run.setdefault(q, {{}})[d] = float(s)
m = {{"ndcg_cut.{K}", "map_cut.{K}", "recall.{K}", "P.{K}"}}
per_query = pytrec_eval.RelevanceEvaluator(qrels, m).evaluate(run)
names = next(iter(per_query.values()))
print({{n: sum(v[n] for v in per_query.values()) / len(per_query) for n in names}}["ndcg_cut_10"])
"""

IR_MEASURES = f"""
import sys, ir_measures
from ir_measures import nDCG, AP, R, P
measures = [m @ k for m in (nDCG, AP, R, P) for k in ({K})]
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
run = list(ir_measures.read_trec_run(sys.argv[2]))
print(ir_measures.calc_aggregate(measures, qrels, run)[nDCG @ 10])
"""

RANX = f"""
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
metrics = [f"{{m}}@{{k}}" for m in ("ndcg", "map", "recall", "precision") for k in ({K})]
print(evaluate(qrels, run, metrics)["ndcg@10"])
"""


def generate(folder: Path, n_queries: int, depth: int, n_docs: int = 8_841_823, seed: int = 0) -> tuple[Path, Path]:
    """The run (score-sorted, 4-decimal scores: realistic ties) and qrels; reused when present."""
    run, qrels = folder / f"run-{n_queries}x{depth}.trec", folder / f"qrels-{n_queries}.trec"
    if run.exists() and qrels.exists():
        return run, qrels
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    relevant = []
    with open(f"{run}.tmp", "w") as handle:
        for q in range(n_queries):
            qid = 1_000_000 + q
            docs = rng.choice(n_docs, size=depth, replace=False)
            scores = np.sort(np.round(rng.normal(20.0, 3.0, size=depth), 4))[::-1]
            handle.write("".join(f"{qid} Q0 {d} {r} {s:.4f} bench\n"
                                 for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1)))
            # 1-2 relevant documents (mean ~1.1), about half of them retrieved somewhere in the top 1000.
            for _ in range(1 if rng.random() < 0.9 else 2):
                doc = int(docs[rng.integers(depth)]) if rng.random() < 0.5 else int(rng.integers(n_docs))
                relevant.append(f"{qid} 0 {doc} 1\n")
    with open(qrels, "w") as handle:
        handle.writelines(dict.fromkeys(relevant))
    os.replace(f"{run}.tmp", run)
    return run, qrels


def measure(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, last stdout line) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}")
    lines = out.strip().splitlines()
    return wall, usage.ru_maxrss / 1024, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/harness-eval-speed"))
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=[], help="tools to leave out (pytrec_eval ir_measures ranx)")
    args = parser.parse_args()

    run, qrels = generate(args.dir, args.queries, args.depth)
    print(f"run {run} ({run.stat().st_size / 1e6:.0f} MB, {args.queries} x {args.depth}); qrels {qrels}")
    scripts = {}
    for name, text in (("pytrec_eval", PYTREC), ("ir_measures", IR_MEASURES), ("ranx", RANX)):
        if name not in args.skip:
            path = args.dir / f"anchor_{name}.py"
            path.write_text(text)
            scripts[name] = [sys.executable, str(path), str(qrels), str(run)]
    harness = shutil.which("harness") or "harness"
    json_out = args.dir / "metrics.json"
    commands = {"harness evaluate": [harness, "evaluate", "--qrels", str(qrels), "--run", str(run)],
                "harness evaluate --json": [harness, "evaluate", "--qrels", str(qrels), "--run", str(run),
                                            "--json", str(json_out)],
                **scripts}
    if "ranx" in scripts:
        measure(scripts["ranx"])  # warm-up: numba compiles ranx's metrics into its cache
    best: dict[str, tuple[float, float, str]] = {}
    for _ in range(args.repeats):  # interleaved, so that load on the machine hits every tool alike
        for name, argv in commands.items():
            wall, rss, out = measure(argv)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, max(rss, best.get(name, (0, 0))[1]), out)
    ours = best["harness evaluate"][0]
    print(f"{'tool':26} {'wall s':>8} {'peak RSS MB':>12} {'harness evaluate faster by':>28}")
    for name, (wall, rss, _) in best.items():
        ratio = "" if name.startswith("harness") else f"{wall / ours:.1f}x"
        print(f"{name:26} {wall:8.2f} {rss:12.0f} {ratio:>28}")
    print(f"--json (per-query values of {args.queries} queries) adds {best['harness evaluate --json'][0] - ours:+.2f} s")


if __name__ == "__main__":
    main()
