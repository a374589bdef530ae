"""A new user's journey on NFCorpus (../shared/datasets/nfcorpus), checked against oracles built from the raw files.

NFCorpus differs from SciFact where numbers can go wrong: graded qrels (11,758 judgments of grade 1, 576 of
grade 2), 323 test queries with 1 to several hundred relevant documents each, 15 one-word queries whose words
occur in no document (BM25 retrieves nothing for them), and a queries file that holds all 3,237 queries of
every split. Every expected value below is recomputed here with pytrec_eval (trec_eval 9, the oracle of
BEIR's numbers) from the dataset files read as BEIR's ``GenericDataLoader`` reads them (gzip + json, the
qrels TSV with its header and CRLF line ends), or is a published number (REFERENCE_SCORES.md, docs).
The BM25 index is built in a temporary cache (~0.2 s); the whole file runs in a few seconds.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.conftest import shared_dataset

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (dev extra) is the test oracle")

K = (1, 3, 5, 10, 100, 1000)
TREC = {"NDCG": "ndcg_cut", "MAP": "map_cut", "Recall": "recall", "P": "P"}
# The 15 test queries none of whose words occurs in any NFCorpus document (checked by grep on the corpus):
NO_HITS = {"PLAIN-551", "PLAIN-997", "PLAIN-1098", "PLAIN-1214", "PLAIN-1309", "PLAIN-1611", "PLAIN-1621",
           "PLAIN-1679", "PLAIN-1752", "PLAIN-1827", "PLAIN-2134", "PLAIN-2209", "PLAIN-2271", "PLAIN-2396",
           "PLAIN-2408"}


# --- the dataset as BEIR's GenericDataLoader reads it (independent of the harness) -------------------------

def beir_corpus(folder: Path) -> dict[str, dict[str, str]]:
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        return {d["_id"]: {"title": d.get("title", ""), "text": d.get("text", "")} for d in map(json.loads, handle)}


def beir_qrels(folder: Path, split: str = "test") -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        next(reader)
        for qid, did, score in reader:
            qrels.setdefault(qid, {})[did] = int(score)
    return qrels


def trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            qid, _, did, _, score, _ = line.split()
            run.setdefault(qid, {})[did] = float(score)
    return run


def oracle(qrels: dict, run: dict, threshold: int = 1) -> dict[str, dict[str, float]]:
    """Per-query values under the harness's contract: pytrec_eval's four families, MRR@k and R_cap@k by
    their definitions on trec_eval's ranking (float32 score descending, doc id descending); a judged query
    missing from the run scores 0 (trec_eval -c); a query without a grade >= threshold is left out."""
    measures = {f"{name}.{','.join(map(str, K))}" for name in TREC.values()}
    values = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)
    per = {}
    for qid, judged in qrels.items():
        n_rel = sum(g >= threshold for g in judged.values())
        if not n_rel:
            continue
        ranked = [d for _, d in sorted(((np.float32(s), d) for d, s in run.get(qid, {}).items()), reverse=True)]
        row = {}
        for k in K:
            for family, trec in TREC.items():
                row[f"{family}@{k}"] = values[qid][f"{trec}_{k}"] if qid in values else 0.0
            hits = [judged.get(d, 0) >= threshold for d in ranked[:k]]
            row[f"R_cap@{k}"] = sum(hits) / min(n_rel, k)
            row[f"MRR@{k}"] = 1 / (hits.index(True) + 1) if True in hits else 0.0
        per[qid] = row
    return per


def assert_matches(document: dict, expected: dict[str, dict[str, float]]) -> None:
    assert set(document["per_query"]) == set(expected)
    for qid, row in expected.items():
        for name, value in row.items():
            assert document["per_query"][qid][name] == pytest.approx(value, abs=1e-9), (qid, name)
    for name in expected[next(iter(expected))]:
        mean = math.fsum(row[name] for row in expected.values()) / len(expected)
        assert document["metrics"][name] == pytest.approx(mean, abs=1e-12), name


# --- the journey through the command line -------------------------------------------------------------------

@pytest.fixture(scope="module")
def journey(tmp_path_factory):
    """``harness run -d <nfcorpus folder> -r bm25`` then ``harness evaluate --relevance-threshold 2`` on its
    run, as a user types them (the BM25 cache in a temporary folder)."""
    folder = shared_dataset("nfcorpus")
    from harness.cli import _register, app

    _register()
    out = tmp_path_factory.mktemp("nfcorpus-journey")
    runner = CliRunner()
    env = {"HARNESS_CACHE_DIR": str(out / "cache"), "COLUMNS": "200"}
    ran = runner.invoke(app, ["run", "--dataset", str(folder), "--retriever", "bm25", "-o", str(out / "results"),
                              "-q"], env=env)
    assert ran.exit_code == 0, ran.output
    result = out / "results" / "nfcorpus" / "bm25"
    evaluated = runner.invoke(app, ["evaluate", "--qrels", str(folder / "qrels" / "test.tsv"),
                                    "--run", str(result / "run.trec"), "--relevance-threshold", "2",
                                    "--json", str(out / "l2.json")], env=env)
    assert evaluated.exit_code == 0, evaluated.output
    return folder, result, json.loads((out / "l2.json").read_text())


def test_harness_run_bm25_equals_pytrec_eval_on_the_raw_files(journey):
    folder, result, _ = journey
    document = json.loads((result / "metrics.json").read_text())
    qrels, run = beir_qrels(folder), trec_run(result / "run.trec")
    assert (len(qrels), sum(map(len, qrels.values()))) == (323, 12_334)  # PROVENANCE.md, MTEB's statistics
    assert set(qrels) - set(run) == NO_HITS  # judged, but BM25 retrieves nothing: scored 0 (trec_eval -c)
    assert (document["n_queries"], document["n_missing_from_run"], document["n_without_relevant"]) == (323, 15, 0)
    assert "15 missing from the run, scored 0" in (result / "metrics.md").read_text()
    assert_matches(document, oracle(qrels, run))
    # docs/bm25.md and docs/pipelines.md print these to 6 digits; Anserini's flat BM25 (REFERENCE_SCORES.md B)
    # is 0.3218 / 0.2457 / 0.3704: see the next test for the gap.
    assert round(document["metrics"]["NDCG@10"], 6) == 0.320555
    assert round(document["metrics"]["Recall@100"], 6) == 0.245680
    assert round(document["metrics"]["Recall@1000"], 4) == 0.3701


def test_anserini_flat_bm25_is_reproduced_exactly_under_anserinis_tie_order(journey):
    """The whole gap to Anserini's published flat BM25 on NFCorpus (nDCG@10 0.3218, R@100 0.2457,
    R@1000 0.3704; REFERENCE_SCORES.md B) is the order of exactly tied scores: Anserini breaks ties by
    doc id ascending (and its run's scores keep that order under trec_eval), trec_eval's own order is
    doc id descending.
    The same BM25 scores (retrieved past every tie at rank 1000), ordered Anserini's way and cut at 1000,
    give all three published numbers under pytrec_eval."""
    folder, _, _ = journey
    from harness.datasets import load_dataset
    from retrievers.bm25 import BM25Retriever

    dataset = load_dataset(str(folder))
    retriever = BM25Retriever(cache=False)
    retriever.index(dataset.corpus)
    deep = retriever.search(dataset.queries, 1100).to_dict()  # BM25's scores are float32 values
    for docs in deep.values():  # no tie straddles rank 1000 unseen: the group at 1000 ends before 1100
        scores = sorted(docs.values(), reverse=True)
        assert len(scores) < 1100 or scores[999] > scores[-1]
    qrels = beir_qrels(folder)

    def means(descending_ids: bool) -> tuple[float, ...]:
        cut = {}
        for qid, docs in deep.items():
            ranked = sorted(docs, key=lambda d: (-docs[d], d))  # doc id ascending among ties
            if descending_ids:
                ranked = [d for _, d in sorted(((docs[d], d) for d in docs), reverse=True)]
            cut[qid] = {d: float(1000 - i) for i, d in enumerate(ranked[:1000])}  # distinct scores: order kept
        values = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100,1000"}).evaluate(cut)
        return tuple(round(math.fsum(values.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels), 4)
                     for m in ("ndcg_cut_10", "recall_100", "recall_1000"))

    assert means(descending_ids=False) == (0.3218, 0.2457, 0.3704)  # Anserini, published
    assert means(descending_ids=True) == (0.3206, 0.2457, 0.3701)  # this project (trec_eval's order)


def test_threshold_two_keeps_graded_gains_and_leaves_out_queries_without_grade_two(journey):
    folder, result, document = journey
    qrels, run = beir_qrels(folder), trec_run(result / "run.trec")
    with_two = {q for q, judged in qrels.items() if 2 in judged.values()}
    assert len(with_two) == 119  # 576 grade-2 judgments over 119 queries
    assert (document["n_queries"], document["n_without_relevant"], document["n_missing_from_run"]) == (119, 204, 0)
    assert_matches(document, oracle(qrels, run, threshold=2))


def test_ndcg_counts_grade_two_as_gain_two(journey):
    """A worked example on a real query: PLAIN-2's judged grades and BM25's top 10, nDCG@10 by the
    definition (gain = grade, discount log2(rank + 1), ideal from every judged grade > 0)."""
    folder, result, _ = journey
    document = json.loads((result / "metrics.json").read_text())
    judged, run = beir_qrels(folder)["PLAIN-2"], trec_run(result / "run.trec")["PLAIN-2"]
    assert sorted(set(judged.values())) == [1, 2]
    top = [d for _, d in sorted(((np.float32(s), d) for d, s in run.items()), reverse=True)][:10]

    def ndcg(gain):
        dcg = sum(gain(judged.get(d, 0)) / math.log2(i + 2) for i, d in enumerate(top))
        ideal = sorted((gain(g) for g in judged.values() if g > 0), reverse=True)[:10]
        return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))

    graded, binary = ndcg(lambda g: g), ndcg(lambda g: float(g >= 1))
    assert abs(graded - binary) > 1e-3  # the grades matter for this query
    assert document["per_query"]["PLAIN-2"]["NDCG@10"] == pytest.approx(graded, abs=1e-12)


def test_documents_reach_the_retrievers_as_beir_joins_them():
    """BEIR's and MTEB's models read (title + " " + text).strip(); the corpus hands the retrievers exactly
    that for every NFCorpus document (ids MED-*, 3,633 of them)."""
    folder = shared_dataset("nfcorpus")
    from harness.datasets import load_dataset

    corpus = load_dataset(str(folder)).corpus
    raw = beir_corpus(folder)
    assert len(corpus) == len(raw) == 3633
    assert dict(zip(corpus.ids, corpus.contents())) == {d: (v["title"] + " " + v["text"]).strip()
                                                        for d, v in raw.items()}


def test_a_pipeline_cut_below_the_largest_cutoff_is_recorded_and_warned_about(tmp_path):
    """``harness run --pipeline`` whose last stage keeps 100 documents, with cutoffs up to 1000: the values
    at 1000 are those of the top 100, so the result should say depth 100 and
    warn as ``harness run --depth 100`` does (README: a --depth below a cutoff is warned about); it recorded
    depth 1000 and no warning."""
    folder = shared_dataset("nfcorpus")
    from harness.cli import _register, app

    _register()
    pipeline = tmp_path / "p.toml"
    pipeline.write_text('name = "bm25-100"\n[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n'
                        'depth = 100\n')
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    ran = CliRunner().invoke(app, ["run", "--pipeline", str(pipeline), "--dataset", str(folder), "--k", "10,1000",
                                   "-o", str(tmp_path / "results"), "-q"], env=env)
    assert ran.exit_code == 0, ran.output
    result = tmp_path / "results" / "nfcorpus" / "bm25-100"
    assert max(map(len, trec_run(result / "run.trec").values())) == 100  # the values at 1000 are of the top 100
    document = json.loads((result / "metrics.json").read_text())
    assert document["settings"]["depth"] == 100
    assert any("depth 100 is below the largest cutoff 1000" in w for w in document.get("warnings") or [])
