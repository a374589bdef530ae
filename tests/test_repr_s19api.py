"""What a notebook user sees on printing the library's values: one short line stating the sizes, whatever
the size of the value (the dataclass reprs printed every array, id and text: 39,587 characters for SciFact's
Dataset, 55,333 for its EvaluationResult, 102,169 for its MetricsDocument, 202,301 for an Experiment; more
for larger collections). The expected counts are those of the values built here."""

from __future__ import annotations

import numpy as np

from harness.compare import align, compare
from harness.compare.load import SystemResult
from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.qrels import Qrels
from harness.reports import MetricsDocument
from harness.run import Run

N_QUERIES, DEPTH = 2_000, 30


def build():
    ids = [f"q{i}" for i in range(N_QUERIES)]
    run = Run.from_dict({q: {f"d{(i + j) % 100}": float(DEPTH - j) for j in range(DEPTH)} for i, q in enumerate(ids)})
    qrels = Qrels.from_dict({q: {f"d{i % 100}": 2, f"d{(i + 50) % 100}": 0} for i, q in enumerate(ids)})
    return ids, run, qrels


def short(value, limit=400):
    text = repr(value)
    assert "\n" not in text and len(text) <= limit, text[:500]
    return text


def test_run_qrels_and_result_print_as_one_line_of_counts():
    ids, run, qrels = build()
    assert short(run) == "Run(2,000 queries, 60,000 entries, 100 document ids)"
    assert short(qrels) == "Qrels(2,000 queries, 4,000 judgments, grades 0..2)"
    result = Evaluator(["P@1", "NDCG@10", "AP"]).evaluate(run, qrels)
    # every query's relevant document d{i % 100} is ranked first (score 30): P@1 = NDCG@10 = AP = 1
    assert short(result) == ("EvaluationResult(2,000 queries, 3 metrics: P@1 1.0000, NDCG@10 1.0000, AP 1.0000; "
                             "n_without_relevant=0, n_missing_from_run=0, settings={'relevance_threshold': 1.0, "
                             "'ignore_identical_ids': True, 'semantics': 'trec_eval-9'})")
    many = Evaluator(k_values=[1, 10]).evaluate(run, qrels)  # BEIR's six at two cutoffs: 12 metrics
    assert short(many).startswith("EvaluationResult(2,000 queries, 12 metrics: NDCG@1 1.0000, NDCG@10 1.0000")
    assert "... (+6 more)" in repr(many)
    huge = Evaluator(["DCG_exp@1"]).evaluate(Run.from_dict({"q": {"d": 1.0}}), Qrels.from_dict({"q": {"d": 1000}}))
    assert "DCG_exp@1 1.072e+301;" in short(huge)  # 2^1000 - 1 (not 302 digits)
    assert repr(Run.from_dict({})) == "Run(0 queries, 0 entries, 0 document ids)"
    assert repr(Qrels.from_dict({})) == "Qrels(0 queries, 0 judgments)"


def test_dataset_queries_and_corpus_print_their_sizes():
    ids, _, qrels = build()
    texts = ["a long query text " * 20] * N_QUERIES
    corpus = Corpus([f"d{i}" for i in range(100)], [""] * 100, ["text"] * 100)
    queries = Queries(ids, texts)
    assert short(corpus) == "Corpus(100 documents)"
    assert short(queries) == f"Queries(2,000 queries; first 'q0': {texts[0][:57] + '...'!r})"
    assert repr(Queries([], [])) == "Queries(0 queries)"
    dataset = Dataset("tiny", "test", corpus, queries, qrels)
    assert short(dataset, 600) == (
        "Dataset(name='tiny', split='test', corpus=Corpus(100 documents), queries=" + repr(queries)
        + ", qrels=Qrels(2,000 queries, 4,000 judgments, grades 0..2), files={}, warnings=[], load_s=0.0, content={})")


def test_metrics_document_and_comparison_summarise_per_query_values():
    ids, run, qrels = build()
    result = Evaluator(["P@1", "NDCG@10"]).evaluate(run, qrels)
    document = MetricsDocument.build(result, dataset={"name": "tiny"}, retriever={"name": "x"}, k_values=[1, 10],
                                     depth=30, timings={}, query_latency_ms={q: 1.0 for q in ids})
    text = short(document, 2_000)
    assert "per_query=<2,000 queries>" in text and "query_latency_ms=<2,000 queries>" in text
    assert "metrics={'P@1': 1.0, 'NDCG@10': 1.0}" in text
    systems = [SystemResult(name, f"{name}/metrics.json", result.query_ids, dict(result.values)) for name in "ab"]
    assert short(systems[0]) == "SystemResult('a', 2,000 queries, 2 metrics, source='a/metrics.json')"
    aligned = align(systems, ["P@1"])
    assert short(aligned) == "Aligned(2,000 queries, systems ['a', 'b'], metrics ['P@1'], 0 warnings)"
    assert short(compare(aligned)) == ("Comparison(baseline 'a', systems ['a', 'b'], metrics ['P@1'], 2,000 queries, "
                                       "0 of 1 comparisons significant (randomization, alpha 0.05))")
    assert np.array_equal(systems[0].values["P@1"], np.ones(N_QUERIES))  # (printing changed nothing)
