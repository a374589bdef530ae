"""A dataset built in Python (``Dataset(name, split, Corpus(...), Queries(...), Qrels(...))``) in a pipeline's
stage key.

Such a dataset has no files, so ``Dataset.identity()`` is ``{}``, and the stage key named it by its name and
split alone: two such datasets named alike shared their stages' cache entries. Worked example: documents d1, d2
and the query "apple" judging d1 relevant (grade 1). With d1 = "apple pie", d2 = "banana", BM25 ranks d1 alone:
NDCG@10 = 1. With the texts swapped, it ranks d2 alone: NDCG@10 = 0; the stage was a cache "hit" with the
first dataset's run and NDCG@10 1.0.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries, _hash_strings
from harness.evaluation import Evaluator
from harness.pipeline.cache import StageCache
from harness.pipeline.run import run_pipeline
from harness.pipeline.spec import parse_pipeline
from harness.qrels import Qrels


def dataset(texts, grade=1.0) -> Dataset:
    return Dataset("toy", "test", Corpus(["d1", "d2"], ["", ""], texts), Queries(["q1"], ["apple"]),
                   Qrels.from_rows([("q1", "d1", grade)]))


def run(data: Dataset, cache) -> tuple[str, float, dict]:
    pipeline = parse_pipeline({"name": "pp", "stages": [{"name": "s", "type": "retrieve", "retriever": "bm25"}]})
    experiment, outcomes = run_pipeline(data, pipeline, Evaluator(["NDCG@10"]), [10], cache=StageCache(cache))
    return outcomes[0].status, experiment.document.metrics["NDCG@10"], outcomes[0].run.to_dict()


def test_two_datasets_built_in_python_under_one_name_have_their_own_stages(tmp_path):
    assert run(dataset(["apple pie", "banana"]), tmp_path)[:2] == ("miss", 1.0)
    status, ndcg, found = run(dataset(["banana", "apple pie"]), tmp_path)
    assert (status, ndcg) == ("miss", 0.0) and list(found["q1"]) == ["d2"]  # it was a "hit" with 1.0
    assert run(dataset(["apple pie", "banana"]), tmp_path)[:2] == ("hit", 1.0)  # the same data: its entry
    assert run(dataset(["apple pie", "banana"], grade=2.0), tmp_path)[0] == "miss"  # other qrels: another key


def test_the_digest_reads_the_values_not_their_chunking():
    def digest(*chunks):
        h = hashlib.sha256()
        _hash_strings(h, pa.chunked_array([pa.array(c, pa.string()) for c in chunks], pa.string()))
        return h.hexdigest()

    assert digest(["ab", "c"]) != digest(["a", "bc"])  # the lengths are hashed with the bytes
    assert digest(["ab", "c", "déjà"]) == digest(["ab"], ["c", "déjà"]) == digest([], ["ab", "c"], ["déjà"])
    sliced = pa.array(["x", "ab", "c", "déjà"], pa.string()).slice(1)  # (an offset into the buffers)
    h = hashlib.sha256()
    _hash_strings(h, pa.chunked_array([sliced]))
    assert h.hexdigest() == digest(["ab", "c", "déjà"])
    assert digest(["", "a"]) != digest(["a", ""]) and digest([]) != digest([""])


def test_a_loaded_dataset_keeps_its_file_checksums_in_the_key(tmp_path):
    from harness.datasets import load_dataset
    from harness.pipeline.run import _dataset_identity
    from tests.test_plugin_code import write_dataset

    loaded = load_dataset(str(write_dataset(tmp_path / "tiny")))
    assert _dataset_identity(loaded)["files"] == loaded.identity() != {}  # (the keys of every loaded dataset unchanged)
    assert _dataset_identity(dataset(["apple pie", "banana"]))["files"] == {
        "in-memory": dataset(["apple pie", "banana"]).memory_digest()}
    assert dataset(["apple pie", "banana"]).memory_digest() != dataset(["apple pie", "banana "]).memory_digest()


def test_a_loaded_dataset_whose_queries_or_corpus_were_replaced_has_its_own_stages(tmp_path):
    # SciFact with every query rewritten to "the" (a stopword: BM25 finds nothing, NDCG@10 0) was keyed by its
    # files alone: its stage was a "hit" with the original queries' run, NDCG@10 0.6789 (docs/bm25.md)
    import dataclasses

    from harness.datasets import load_dataset
    from harness.pipeline.run import _dataset_identity

    scifact = load_dataset("scifact")
    assert scifact.changed_since_load() == {}
    assert _dataset_identity(scifact)["files"] == scifact.identity()  # (an unchanged dataset's keys as before)
    status, ndcg, _ = run(scifact, tmp_path)
    assert status == "miss" and ndcg == pytest.approx(0.678909, abs=1e-6)
    rewritten = dataclasses.replace(scifact, queries=Queries(list(scifact.queries.ids), ["the"] * len(scifact.queries)))
    status, ndcg, found = run(rewritten, tmp_path)
    assert (status, ndcg, found) == ("miss", 0.0, {})  # it was ("hit", 0.6789...)
    assert set(rewritten.changed_since_load()) == {"queries in memory"}
    assert run(scifact, tmp_path)[0] == "hit"
    texts = list(scifact.corpus.texts)
    texts[0] = texts[0] + " edited"
    other = dataclasses.replace(scifact, corpus=Corpus(list(scifact.corpus.ids), list(scifact.corpus.titles), texts))
    assert set(other.changed_since_load()) == {"corpus in memory"} and run(other, tmp_path)[0] == "miss"
    scifact.queries.texts[0] = "edited in place"  # (the lists of a frozen Queries can still be changed)
    assert set(scifact.changed_since_load()) == {"queries in memory"}


def test_python_lists_hash_as_the_arrow_columns_of_the_same_values():
    from harness.datasets.corpus import _hash_texts

    values = ["ab", "", "déjà", "c"]
    arrow, lists = hashlib.sha256(), hashlib.sha256()
    _hash_strings(arrow, pa.chunked_array([pa.array(values[:1]), pa.array(values[1:])]))
    _hash_texts(lists, values)
    assert arrow.hexdigest() == lists.hexdigest()


def test_metrics_json_records_what_a_built_dataset_holds_and_compare_tells_two_apart(tmp_path):
    # Two datasets built in Python under one name recorded no files and no content: `harness compare` took them
    # for one dataset, without the warning it gives two results of different files
    import subprocess
    import sys

    from harness.experiment import run_experiment
    from retrievers.bm25 import BM25Retriever

    def built(texts):
        return Dataset("toy", "test", Corpus(["d1", "d2"], ["", ""], texts), Queries(["q1", "q2"], ["apple", "pie"]),
                       Qrels.from_rows([("q1", "d1", 1.0), ("q2", "d1", 1.0)]))

    first, second = built(["apple pie", "banana"]), built(["banana", "apple pie"])
    for data, name in ((first, "a"), (second, "b"), (first, "c")):
        run_experiment(data, BM25Retriever(cache=False), Evaluator(k_values=[10]), [10], output_dir=tmp_path / name)
    import json

    recorded = json.loads((tmp_path / "a" / "metrics.json").read_text())["dataset"]
    assert recorded["files"] == {} and recorded["content"] == {"in-memory": first.memory_digest()}

    def compare(*names):
        out = subprocess.run([sys.executable, "-m", "harness", "compare", *(str(tmp_path / n) for n in names)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout + out.stderr

    assert "were evaluated on different dataset files" in compare("a", "b")  # (no warning before)
    assert "different dataset files" not in compare("a", "c")


def test_a_loaded_dataset_with_other_qrels_records_them():
    # binarised judgments swapped in with dataclasses.replace: metrics.json named the qrels file's checksum
    import dataclasses

    from harness.datasets import load_dataset
    from harness.experiment import dataset_info

    scifact = load_dataset("scifact")
    q = scifact.qrels
    binary = dataclasses.replace(scifact, qrels=Qrels(q.query_ids, q.doc_ids, (q.grades >= 1).astype(float) * 2))
    assert set(binary.changed_since_load()) == {"qrels in memory"}
    assert "qrels in memory" in dataset_info(binary)["content"]
    assert dataset_info(scifact) == {**dataset_info(scifact), "content": scifact.content}  # (unchanged: as before)
