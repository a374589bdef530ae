"""A plugin retriever's search() result is checked before it becomes a run (plugin author's review).

The dataset: documents d1..d4, queries q1 (judged d2, grade 1) and q2 (judged d3, grade 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.errors import HarnessError
from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.retriever import Retriever
from harness.run import Run


def dataset(n_queries: int = 2) -> Dataset:
    ids = [f"q{i}" for i in range(1, n_queries + 1)]
    qrels = Qrels.from_rows([("q1", "d2", 1), ("q2", "d3", 1)] + [(q, "d4", 1) for q in ids[2:]])
    return Dataset("tiny", "test", Corpus(["d1", "d2", "d3", "d4"], [""] * 4, ["x"] * 4),
                   Queries(ids, ["x"] * len(ids)), qrels)


class Plugin(Retriever):
    name = "plugin"

    def __init__(self, search):
        self._search = search

    def index(self, corpus):
        self.corpus = corpus

    def search(self, queries, k):
        return self._search(self, queries, k)


def experiment(search, n_queries: int = 2, **evaluator):
    return run_experiment(dataset(n_queries), Plugin(search), Evaluator(["P@1", "NDCG@3"], [1, 3], **evaluator), [1, 3])


@pytest.mark.parametrize("returned, kind", [
    (lambda q: {x: {"d2": 1.0} for x in q.ids}, "dict"),  # BEIR's shape: the docs ask for a Run
    (lambda q: np.zeros((len(q.ids), 3)), "ndarray"),
    (lambda q: None, "NoneType"),
])
def test_a_search_result_that_is_not_a_run_is_one_error_naming_the_retriever(returned, kind):
    # (was: AttributeError: 'dict' object has no attribute 'without_identical_ids', a traceback)
    with pytest.raises(HarnessError, match=rf"retriever 'plugin': search\(\) returned {kind}, not a harness.run.Run"):
        experiment(lambda self, queries, k: returned(queries))


def test_a_query_not_asked_for_is_refused_naming_it():
    # A plugin that answers every query it saw at its first call, whatever batch it is asked (40
    # queries: two batches of 32 and 8). Was: "query ids in a run must be unique" (no query, no retriever).
    def search(self, queries, k):
        self.first = getattr(self, "first", list(queries.ids))
        return Run.from_dict({q: {"d4": 1.0} for q in self.first})
    with pytest.raises(HarnessError, match=r"retriever 'plugin': search\(\) returned query 'q1', which it was not asked for"):
        experiment(search, n_queries=40)


def test_int_document_ids_are_refused_not_scored_zero():
    # run_from_topk with the corpus's rows as ids (a plugin's slip) and the corpus's id ranks: Run.from_arrays
    # trusts a producer that gives ranks, so the ints went through and matched no judged id: P@1 was 0.0
    # (the right value for the ranking d2, d3, ... is 0.5: q1's d2 is relevant). Without an output folder
    # nothing else noticed.
    from retrievers.topk import run_from_topk

    def search(self, queries, k):
        chosen = [np.array([1, 2]) for _ in queries.ids]  # rows of d2, d3
        return run_from_topk(list(queries.ids), chosen, [np.array([2.0, 1.0])] * len(queries.ids),
                             np.arange(len(self.corpus)), id_rank=self.corpus.id_rank)
    with pytest.raises(HarnessError, match=r"returned document 1 for query 'q1': its id is int, not str"):
        experiment(search)


def test_one_document_id_at_two_codes_is_refused():
    # doc_vocab ["d2", "d3", "d3"] with vocab_index {"d2": 0, "d3": 1}; q1 retrieves d2 (code 0), q2 d3 at
    # code 2. The evaluator finds the judged "d3" at code 1 only: P@1 was silently 0.5 (q2's relevant d3
    # at rank 1 not counted; the ranking's P@1 is 1.0).
    def search(self, queries, k):
        return Run.from_arrays(["q1", "q2"], [0, 1, 2], [0, 2], [2.0, 2.0], ["d2", "d3", "d3"], {"d2": 0, "d3": 1})
    with pytest.raises(HarnessError, match=r"returned document 'd3' for query 'q2': its id is code 2 of the run's doc_vocab, "
                                          r"where the evaluator looks it up at code 1"):
        experiment(search)


def test_a_nan_score_the_run_claims_is_in_order_is_refused_under_trec_eval_10():
    # canonical=True skips the order check (and its NaN refusal); under trec_eval-10 nothing else looked,
    # and the NaN document was ranked where it stood (P@1 0.0 here: d1 first for both queries).
    def search(self, queries, k):
        return Run.from_arrays(list(queries.ids), [0, 2, 4], [0, 1, 0, 1], [np.nan, 1.0, np.nan, 1.0],
                               ["d1", "d2"], canonical=True)
    with pytest.raises(HarnessError, match=r"returned a NaN score for query 'q1', document 'd1'"):
        experiment(search, semantics="trec_eval-10")


def test_documents_the_corpus_lacks_are_kept_and_named_in_a_warning():
    # "zz" is retrieved first for q1: it is kept (as harness evaluate keeps a run file's), so q1's P@1 is 0
    # and q2's (d3 first) 1: mean 0.5 -- and the warning names it (it was silent: a plugin whose ids
    # do not match the corpus's scored 0 with no word).
    def search(self, queries, k):
        return Run.from_dict({"q1": {"zz": 3.0, "d2": 1.0}, "q2": {"d3": 1.0}})
    exp = experiment(search)
    assert exp.result.means["P@1"] == 0.5
    assert exp.document.warnings == ["1 document id(s) returned by 'plugin' are not in the corpus (first: 'zz' for "
                                     "query 'q1'); they count as retrieved and not relevant"]


def test_a_well_behaved_plugin_is_scored_as_before():
    # More hits than k, out of order, tied in float32 (1.00000001 and 1.0): cut in the evaluator's order.
    # q1: d2 (1.0) and d1 (1.00000001) tie in float32, d2 (larger id) first: P@1 1; q2: d3 first: P@1 1.
    def search(self, queries, k):
        return Run.from_dict({"q1": {"d1": 1.00000001, "d3": 0.5, "d2": 1.0, "d4": 0.1}, "q2": {"d3": 4.0, "d1": 1.0}})
    exp = experiment(search)
    assert exp.result.means["P@1"] == 1.0 and exp.document.warnings is None


def harness(*args, pythonpath):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(pythonpath)})


PLUGIN = '''
from harness.retriever import Retriever
from harness.run import Run


class Named(Retriever):
    def __init__(self, label: str = "x"):
        self.name = label

    def index(self, corpus):
        pass

    def search(self, queries, k):
        return Run.from_dict({q: {"d2": 1.0} for q in queries.ids})
'''


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "review_named_plugin.py").write_text(PLUGIN)
    ds = tmp_path / "tiny"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": "x"}) + "\n" for d in ("d1", "d2")))
    (ds / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "x"}) + "\n")
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    return tmp_path


def test_a_retriever_name_that_is_no_folder_inside_the_results_is_refused(folder):
    # The result folder defaults to the retriever's name: ".." wrote metrics.json, run.trec, ... into
    # out/ itself (an absolute name anywhere), as --name .. is refused for.
    out = folder / "out"
    proc = harness("run", "-d", str(folder / "tiny"), "-r", "review_named_plugin:Named", "-p", "label=..", "--k", "1",
                   "-o", str(out), "-q", pythonpath=folder / "plug")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: retriever 'review_named_plugin:Named' is named '..', which cannot name a result folder inside "
        f"{out}/<dataset>/: give one with --name"]
    assert not out.exists()


def test_a_retriever_name_run_trec_cannot_hold_is_refused_before_the_search(tmp_path):
    # The name is run.trec's tag column: "no search" was refused when run.trec was written, after the
    # index, the search and the evaluation, leaving an empty result folder behind.
    def search(self, queries, k):
        raise AssertionError("search() ran")
    plugin = Plugin(search)
    plugin.name = "no search"
    with pytest.raises(ValueError, match=r"^run tag 'no search' cannot be written to a TREC file \(contains whitespace\)$"):
        run_experiment(dataset(), plugin, Evaluator(["P@1"], [1]), [1], output_dir=tmp_path / "no search")
    assert not (tmp_path / "no search").exists()


def test_metrics_json_records_the_version_of_a_plugin_loaded_by_its_entry_point(folder):
    # versions held the harness's and fixed libraries' only: a result of `-r idf-overlap` did not say
    # which release of the plugin produced it. (A dist-info folder on the path is what pip install makes.)
    repo = Path(__file__).resolve().parents[2]
    site = folder / "site"
    dist = site / "harness_example_plugin-0.3.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-example-plugin\nVersion: 0.3.1\n")
    (dist / "entry_points.txt").write_text("[retrieval_harness.retrievers]\n"
                                           "idf-overlap = harness_example_plugin:IdfOverlapRetriever\n")
    proc = harness("run", "-d", str(folder / "tiny"), "-r", "idf-overlap", "--k", "1", "-o", str(folder / "out"), "-q",
                   pythonpath=os.pathsep.join([str(site), str(repo / "examples" / "plugin"), str(repo)]))
    assert proc.returncode == 0, proc.stderr
    versions = json.loads((folder / "out" / "tiny" / "idf-overlap" / "metrics.json").read_text())["versions"]
    assert versions["harness-example-plugin"] == "0.3.1" and versions["retrieval-harness"]
