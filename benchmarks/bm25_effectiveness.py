"""BM25 effectiveness vs Anserini's published flat and multifield BM25 (and, optionally, Lucene's own flat run).

    PYTHONPATH=. python benchmarks/bm25_effectiveness.py [--datasets scifact nfcorpus]
        [--fields flat multifield] [--pyserini-python /work/venv-pyserini/bin/python]

For each dataset (a bundled name or a BEIR folder; ``scifact``/``nfcorpus`` are looked up in
../shared/datasets first): this project's default BM25 (bm25s backend, k1 0.9, b 0.4, Lucene
analyzer) at depth 1000, scored with the project's evaluator (identical ids dropped), printed next
to Anserini's published numbers (REFERENCE_SCORES.md, table B) with the differences; then the same with
``fields=multifield`` against Anserini's multifield numbers (docs/bm25.md, "Multifield").

With ``--pyserini-python``, Lucene (Anserini 1.7.1) runs the same test (flat or multifield) through
benchmarks/lucene_peer.py, its run is scored with the same evaluator, and the top 10 of every
query is compared with ours: "same top-10 set" counts queries whose 10 best documents are the
same set; "same up to ties" also counts queries where the sets differ only inside a group of
documents with exactly equal (float32) scores straddling rank 10 (Anserini orders such ties by
doc id ascending, the project's canonical order is doc id descending).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.datasets import load_dataset
from harness.evaluation import evaluate
from harness.run import Run
from retrievers.bm25 import BM25Retriever

ANSERINI_FLAT = {  # REFERENCE_SCORES.md table B: nDCG@10, R@100, R@1000
    "scifact": (0.6789, 0.9253, 0.9767),
    "nfcorpus": (0.3218, 0.2457, 0.3704),
}
ANSERINI_MULTIFIELD = {  # the same table's multifield columns
    "scifact": (0.6647, 0.9076, 0.9800),
    "nfcorpus": (0.3254, 0.2500, 0.3718),
}
METRICS = ["NDCG@10", "Recall@100", "Recall@1000"]
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def dataset_path(name: str) -> str:
    return str(SHARED / name) if (SHARED / name / "corpus.jsonl.gz").is_file() else name


def read_trec(path: Path) -> tuple[Run, dict[str, list[str]]]:
    results: dict[str, dict[str, float]] = {}
    ranked: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            results.setdefault(qid, {})[doc] = float(score)
            ranked.setdefault(qid, []).append(doc)
    return Run.from_dict(results), ranked


def top10_agreement(run: Run, lucene_ranked: dict[str, list[str]]) -> tuple[int, int, int]:
    same = same_up_to_ties = 0
    for i, qid in enumerate(run.query_ids.tolist()):
        start, end = run.offsets[i], run.offsets[i + 1]
        pairs = [(d, s) for d, s in zip(run.doc_ids(i), run.scores[start:end].tolist()) if d != qid]
        ours, ref = {d for d, _ in pairs[:10]}, set(lucene_ranked.get(qid, [])[:10])
        if ours == ref:
            same += 1
            same_up_to_ties += 1
            continue
        if len(pairs) >= 10:
            tenth = pairs[9][1]
            above = {d for d, s in pairs if s > tenth}
            tied = {d for d, s in pairs if s == tenth}
            if above <= ref and ref - above <= tied:
                same_up_to_ties += 1
    return same, same_up_to_ties, run.n_queries


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["scifact", "nfcorpus"])
    parser.add_argument("--fields", nargs="+", choices=["flat", "multifield"], default=["flat", "multifield"])
    parser.add_argument("--pyserini-python", default=None)
    args = parser.parse_args(argv)
    for name in args.datasets:
        for fields in args.fields:
            report(name, fields, args.pyserini_python)


def report(name: str, fields: str, pyserini_python: str | None) -> None:
    """One dataset's BM25 run with ``fields`` against Anserini's published figures for it (and Lucene's run)."""
    dataset = load_dataset(dataset_path(name))
    retriever = BM25Retriever(cache=False, fields=fields)
    retriever.index(dataset.corpus)
    run = retriever.search(dataset.queries, 1000)
    ours = evaluate(run, dataset.qrels, METRICS).means
    print(f"== {dataset.name}: {len(dataset.corpus)} docs, {len(dataset.queries)} queries; params {retriever.params()}")
    ref = (ANSERINI_FLAT if fields == "flat" else ANSERINI_MULTIFIELD).get(dataset.name)
    lucene_means = lucene_ranked = None
    if pyserini_python:
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run([pyserini_python, str(Path(__file__).with_name("lucene_peer.py")), "run",
                                   dataset_path(name), out, *(["--multifield"] if fields == "multifield" else [])],
                                  capture_output=True, text=True)
            if proc.returncode == 0:
                lucene_run, lucene_ranked = read_trec(Path(out) / "run.trec")
                lucene_means = evaluate(lucene_run, dataset.qrels, METRICS).means
            else:
                print(f"   Lucene peer failed: {proc.stderr[-1500:]}", file=sys.stderr)
    header = f"   {'metric':12s} {'project':>9s}"
    if ref:
        header += f" {'Anserini (published)':>21s} {'diff':>8s}"
    if lucene_means:
        header += f" {'Lucene run (here)':>18s} {'diff':>8s}"
    print(header)
    for j, metric in enumerate(METRICS):
        line = f"   {metric:12s} {ours[metric]:9.4f}"
        if ref:
            line += f" {ref[j]:21.4f} {ours[metric] - ref[j]:+8.4f}"
        if lucene_means:
            line += f" {lucene_means[metric]:18.4f} {ours[metric] - lucene_means[metric]:+8.4f}"
        print(line)
    if ref:
        ok = abs(ours["NDCG@10"] - ref[0]) <= 0.003
        print(f"   nDCG@10 within +-0.003 of Anserini: {'yes' if ok else 'NO'} (exact: {ours['NDCG@10']:.6f})")
    if lucene_ranked is not None:
        same, same_ties, n = top10_agreement(run, lucene_ranked)
        print(f"   same top-10 set as Lucene: {same}/{n} = {same / n:.1%}; "
              f"same up to float32 ties at rank 10: {same_ties}/{n} = {same_ties / n:.1%}")


if __name__ == "__main__":
    os.environ.setdefault("DISABLE_TQDM", "1")
    main()
