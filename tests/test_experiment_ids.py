"""Fail fast: a corpus or query id that run.trec could not hold (empty, ASCII whitespace, NUL; a query id
starting with '#') is refused before indexing when a result folder will be written (run_experiment with
output_dir, every `harness bench` cell), with the TREC writer's own message; it used to fail only when
run.trec was written, after the whole index and search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.formats.trec import read_run
from harness.experiment import run_experiment
from harness.qrels import Qrels
from harness.retriever import Retriever
from harness.run import Run


class RecordingRetriever(Retriever):
    """Every document scored 1; records whether index() was called."""

    name = "recording"

    def __init__(self):
        self.indexed = False

    def index(self, corpus) -> None:
        self.indexed = True
        self.doc_ids = list(corpus.ids)

    def search(self, queries, k):
        return Run.from_dict({q: {d: 1.0 for d in self.doc_ids[:k]} for q in queries.ids})


def dataset(doc_ids: list[str], query_ids: tuple[str, ...] = ("q1",)) -> Dataset:
    return Dataset("toy", "test", Corpus(doc_ids, [""] * len(doc_ids), ["text"] * len(doc_ids)),
                   Queries(list(query_ids), ["text"] * len(query_ids)),
                   Qrels.from_rows([(q, doc_ids[0], 1.0) for q in query_ids]))


@pytest.mark.parametrize("doc_ids, query_ids, message", [
    (["d1", "d 2"], ("q1",), "document id 'd 2' cannot be written to a TREC file (contains whitespace): "
                             "document 2 of toy's corpus, which run.trec could not hold"),
    (["d1", "d\x002"], ("q1",), "document id 'd\\x002' cannot be written to a TREC file (contains NUL: "
                                "trec_eval would cut the id there): document 2 of toy's corpus, which run.trec "
                                "could not hold"),
    (["d1", ""], ("q1",), "document id '' cannot be written to a TREC file (empty): document 2 of toy's corpus, "
                          "which run.trec could not hold"),
    (["d1"], ("q1", "#q2"), "query id '#q2' cannot be written to a TREC file (a line starting with '#' is read "
                            "as a comment)"),
    (["d1"], ("q\t1",), "query id 'q\\t1' cannot be written to a TREC file (contains whitespace)"),
])
def test_ids_run_trec_cannot_hold_fail_before_indexing(tmp_path, doc_ids, query_ids, message):
    retriever = RecordingRetriever()
    with pytest.raises(ValueError) as err:
        run_experiment(dataset(doc_ids, query_ids), retriever, Evaluator(["NDCG@1"], k_values=[1]), [1],
                       output_dir=tmp_path / "out")
    assert str(err.value) == message
    assert not retriever.indexed and not (tmp_path / "out").exists()


def test_without_a_result_folder_nothing_is_checked(tmp_path):
    # No run.trec is written: a bad id the run does not retrieve costs nothing, as before.
    retriever = RecordingRetriever()
    exp = run_experiment(dataset(["d1", "d 2"]), retriever, Evaluator(["NDCG@1"], k_values=[1]), [1])
    assert retriever.indexed and exp.run.to_dict() == {"q1": {"d1": 1.0}} and exp.folder is None


def test_a_good_dataset_still_writes_its_folder(tmp_path):
    # U+00A0 is no break for the readers: such an id is written and read back whole
    exp = run_experiment(dataset(["d1", "d\u00a02"]), RecordingRetriever(), Evaluator(["NDCG@1"]), [1],
                         depth=2, output_dir=tmp_path / "out")
    assert read_run(exp.folder / "run.trec").to_dict() == {"q1": {"d1": 1.0, "d\u00a02": 1.0}}


def _beir_folder(folder: Path, doc_ids: list[str]) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": "apple"}) + "\n" for d in doc_ids))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "apple"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\t{doc_ids[0]}\t1\n")
    return folder


def test_harness_run_fails_at_once_with_one_line(tmp_path):
    folder = _beir_folder(tmp_path / "tiny", ["d1", "d 2"])
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(folder), "-o", str(tmp_path / "out"),
                           "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {folder / 'corpus.jsonl'}:2: document id 'd 2' cannot be written to a TREC file "
                           "(contains whitespace): run.trec could not hold it\n")
    assert not (tmp_path / "out").exists()


def test_the_refused_id_is_named_by_its_file_and_line(tmp_path):
    """The file and line of the document, found again in the file (gzipped too; blank lines counted as lines,
    not documents): it was "document 3 of tiny's corpus", which a user had to count to, past blank lines."""
    import gzip

    folder = _beir_folder(tmp_path / "tiny", ["d1", "d2", "d 3"])
    lines = (folder / "corpus.jsonl").read_text().splitlines(keepends=True)
    (folder / "corpus.jsonl").unlink()
    with gzip.open(folder / "corpus.jsonl.gz", "wt") as handle:
        handle.write(lines[0] + "\n  \n" + lines[1] + "\n" + lines[2])
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(folder), "-o", str(tmp_path / "out"),
                           "-q"], capture_output=True, text=True, timeout=120, env={**os.environ,
                           "HARNESS_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {folder / 'corpus.jsonl.gz'}:6: document id 'd 3' cannot be written to a TREC "
                           "file (contains whitespace): run.trec could not hold it\n")


def test_a_bench_cell_fails_before_indexing(tmp_path, monkeypatch):
    from harness.bench import load_config, run_bench

    monkeypatch.setattr(RecordingRetriever, "index", lambda self, corpus: pytest.fail("indexed"))
    folder = _beir_folder(tmp_path / "tiny", ["d1", "d\x002"])
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [1]\nmetrics = ["NDCG@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{folder}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "{__name__}:RecordingRetriever"\nlabel = "rec"\n')
    [outcome] = run_bench(load_config(config)).outcomes
    assert outcome.status == "failed"
    assert outcome.error.endswith(f"{folder / 'corpus.jsonl'}:2: document id 'd\\x002' cannot be written to a "
                                  "TREC file (contains NUL: trec_eval would cut the id there): run.trec could not "
                                  "hold it")


def test_harness_run_pipeline_fails_before_any_stage(tmp_path, harness_cli, monkeypatch):
    monkeypatch.setattr(RecordingRetriever, "index", lambda self, corpus: pytest.fail("indexed"))
    folder = _beir_folder(tmp_path / "tiny", ["d1", "d 2"])
    pipeline = tmp_path / "p.toml"
    pipeline.write_text('name = "p"\n[[stages]]\nname = "one"\ntype = "retrieve"\n'
                        'retriever = "tests.test_experiment_ids:RecordingRetriever"\n')
    out = harness_cli("run", "-d", folder, "--pipeline", pipeline, "-o", tmp_path / "out", "-q")
    assert out.returncode == 2
    assert out.stderr == (f"error: {folder / 'corpus.jsonl'}:2: document id 'd 2' cannot be written to a TREC file "
                          "(contains whitespace): run.trec could not hold it\n")
    assert not (tmp_path / "out").exists()
