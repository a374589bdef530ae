"""harness/reports/writer.py: a document id that run.trec cannot hold, which a retriever returned (a plugin's
or a service's own ids are known only after the search), failed at the run-file write with a line naming
no query, and left the result folder behind holding only its ``.lock``. Now it is refused before the
folder is made, naming the id and the query it was retrieved for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.evaluation import Evaluator
from harness.experiment import run_experiment
from harness.retriever import Retriever
from harness.run import Run
from tests.test_experiment_ids import _beir_folder, dataset


class ServiceIds(Retriever):
    """Returns, for its last query, an id of its own that holds a space (not in the corpus, so not checked
    before), ranked first."""

    name = "service-ids"

    def index(self, corpus) -> None:
        pass

    def search(self, queries, k):
        last = queries.ids[-1]
        return Run.from_dict({q: {"d1": 2.0, "x y": 3.0} if q == last else {"d1": 2.0} for q in queries.ids})


def test_an_unwritable_id_a_retriever_returned_is_refused_naming_its_query_and_no_folder_is_left(tmp_path):
    with pytest.raises(ValueError) as err:
        run_experiment(dataset(["d1", "d2"], ("q1", "q2")), ServiceIds(), Evaluator(["NDCG@1"], k_values=[1]), [1],
                       output_dir=tmp_path / "out")
    assert str(err.value) == ("document id 'x y' cannot be written to a TREC file (contains whitespace): "
                              "retrieved for query 'q2'")
    assert not (tmp_path / "out").exists()


def test_the_cli_prints_one_line_and_leaves_no_folder(tmp_path):
    folder = _beir_folder(tmp_path / "tiny", ["d1", "d2"])
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(folder), "-r",
                           f"{__name__}:ServiceIds", "-o", str(tmp_path / "out"), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == ("error: document id 'x y' cannot be written to a TREC file (contains whitespace): "
                           "retrieved for query 'q1'\n")
    assert not (tmp_path / "out").exists()  # (the old code: out/tiny/<name>/.lock)
