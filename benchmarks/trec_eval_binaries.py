"""Per-query parity with the real trec_eval command-line binaries (9.0.8 and 10.0), for development.

Not run in CI: build trec_eval yourself (github usnistgov/trec_eval; ``make`` in a scratch folder, the
v9.0.8 tag and the 10.0 commit) and pass the binaries. Random cases (float32-only score ties, integer
ties, short rankings, graded qrels with negative grades, judged queries missing from the run) are
written as TREC files; each binary runs with ``-q -c`` and the project evaluates the same files under
the matching semantics (``trec_eval-9`` for 9.x, ``trec_eval-10`` for 10.x). trec_eval prints 4
decimals, so values agree when within 5e-5 (plus float noise). trec_eval 10's ``unj@k`` is checked
as 1 - Judged@k on queries with at least k documents retrieved (unj divides by k when fewer are).
A second call per binary prints ``set_F.0.5`` (trec_eval takes one ``set_F`` weight per call). A NaN on
either side counts as a difference.

    python benchmarks/trec_eval_binaries.py --trec-eval-9 /tmp/te9/trec_eval --trec-eval-10 /tmp/te10/trec_eval
"""

from __future__ import annotations

import argparse
import math
import random
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

from harness.evaluation import Evaluator
from harness.formats.trec import read_qrels, read_run

K = (1, 3, 5, 10, 100)
CUT = {"NDCG": "ndcg_cut", "MAP": "map_cut", "Recall": "recall", "P": "P", "Success": "success",
       "R_cap": "relative_P"}
WHOLE = {"AP": "map", "R-Prec": "Rprec", "bpref": "bpref", "RR": "recip_rank", "NDCG_all": "ndcg",
         "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
         **{f"iprec_at_recall_{p / 10:.2f}": f"iprec_at_recall_{p / 10:.2f}" for p in range(11)},
         "set_P": "set_P", "set_recall": "set_recall", "set_F": "set_F", "11pt_avg": "11pt_avg",
         "set_map": "set_map", "set_relative_P": "set_relative_P", "num_nonrel_judged_ret": "num_nonrel_judged_ret",
         "ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg",
         **{f"Rprec_mult_{m / 10:.2f}": f"Rprec_mult_{m / 10:.2f}" for m in range(2, 21, 2)}}
# Measures a second trec_eval call prints (trec_eval takes one set_F weight per call: the first given).
SECOND = {"set_F_0.50": "set_F_0.5"}
SECOND_ARGS = ["-m", "set_F.0.5"]
TOLERANCE = 5e-5 + 1e-9


def write_case(folder: Path, seed: int, n_queries: int = 200, n_docs: int = 400, comments: bool = False):
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    if comments:
        run_lines.append(f"# ir_metadata: seed {seed}\n")
        qrels_lines.append("# qrels written by trec_eval_binaries.py\n")
    for q in range(n_queries):
        qid = f"q{q}"
        for d in sorted({f"d{rng.randrange(n_docs)}" for _ in range(rng.randrange(1, 25))}):
            qrels_lines.append(f"{qid} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}\n")
        if rng.random() < 0.1:
            continue  # judged, missing from the run
        docs = sorted({f"d{rng.randrange(n_docs)}" for _ in range(rng.choice([rng.randrange(1, 6), rng.randrange(1, 300)]))})
        kind = rng.choice(["float32", "integer", "float"])
        for rank, d in enumerate(docs, 1):
            if kind == "float32":  # equal in float32, not in double
                score = repr(float(rng.randrange(5)) + 1.0 + rng.randrange(1, 50) * 1e-10)
            elif kind == "integer":
                score = str(rng.randrange(4))
            else:
                score = repr(rng.random())
            run_lines.append(f"{qid} Q0 {d} {rank} {score} sys\n")
    (folder / "run").write_text("".join(run_lines))
    (folder / "qrels").write_text("".join(qrels_lines))
    return folder / "run", folder / "qrels"


def trec_eval_values(binary: str, qrels: Path, run: Path, extra: list[str]) -> dict[str, dict[str, float]]:
    whole = list(dict.fromkeys(name.rpartition("_")[0] if name.startswith(("iprec_at_recall", "Rprec_mult")) else name
                               for name in WHOLE.values()))  # (iprec_at_recall, Rprec_mult: their default levels)
    measures = [f"{m}.{','.join(map(str, K))}" for m in CUT.values()] + whole + extra
    values: dict[str, dict[str, float]] = defaultdict(dict)
    for args in ([a for m in measures for a in ("-m", m)], SECOND_ARGS):
        argv = [binary, "-q", "-c", *args, str(qrels), str(run)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, qid, value = line.split()
            if qid != "all":
                values[qid][name] = float(value)
    return values


def compare(binary: str, version: int, semantics: str, seeds: range, comments: bool) -> tuple[int, int, float]:
    """(values compared, values differing, largest difference) over the seeds."""
    names = [f"{f}@{k}" for f in CUT for k in K] + list(WHOLE) + list(SECOND) + ["Judged@5", "Judged@10", "Judged@20"]
    evaluator = Evaluator(names, semantics=semantics, ignore_identical_ids=False)
    compared = differing = 0
    worst = 0.0
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            run_path, qrels_path = write_case(Path(tmp), seed, comments=comments)
            unj = ["unj.5,10,20"] if version >= 10 else []
            theirs = trec_eval_values(binary, qrels_path, run_path, unj)
            ranking = read_run(run_path)
            result = evaluator.evaluate(ranking, read_qrels(qrels_path))
        retrieved = dict(zip(ranking.query_ids.tolist(), (ranking.offsets[1:] - ranking.offsets[:-1]).tolist()))
        for qid, ours in result.per_query().items():
            if qid not in theirs:
                continue  # trec_eval 9 -q prints no line for a query missing from the run
            pairs = [(ours[f"{f}@{k}"], theirs[qid][f"{t}_{k}"]) for f, t in CUT.items() for k in K]
            pairs += [(ours[name], theirs[qid][t]) for name, t in {**WHOLE, **SECOND}.items()]
            if unj:
                pairs += [(1 - ours[f"Judged@{k}"], theirs[qid][f"unj_{k}"]) for k in (5, 10, 20)
                          if retrieved.get(qid, 0) >= k]
            for a, b in pairs:
                compared += 1
                difference = abs(a - b)
                worst = difference if math.isnan(difference) else max(worst, difference)  # (max() drops a NaN)
                differing += not difference <= TOLERANCE  # (a NaN on either side differs)
    return compared, differing, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval-9", help="trec_eval 9.0.8 binary")
    parser.add_argument("--trec-eval-10", help="trec_eval 10.0 binary")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    for binary, version, semantics, comments in ((args.trec_eval_9, 9, "trec_eval-9", False),
                                                 (args.trec_eval_10, 10, "trec_eval-10", True)):
        if not binary:
            continue
        compared, differing, worst = compare(binary, version, semantics, range(args.seeds), comments)
        print(f"{binary} vs harness --semantics {semantics}: {compared} per-query values, {differing} differ "
              f"by more than trec_eval's 4-decimal rounding; largest |difference| {worst:.2g}"
              + ("; files carry # comment lines" if comments else ""))
    if args.trec_eval_9 and args.trec_eval_10:
        # The other semantics against each binary: float32-only ties make them differ.
        _, other9, _ = compare(args.trec_eval_9, 9, "trec_eval-10", range(args.seeds), False)
        _, other10, _ = compare(args.trec_eval_10, 10, "trec_eval-9", range(args.seeds), False)
        print(f"crossed (wrong) semantics: {other9} values differ from 9.0.8 under trec_eval-10, "
              f"{other10} from 10.0 under trec_eval-9")


if __name__ == "__main__":
    main()
