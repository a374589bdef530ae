"""A plugin retriever as `harness run` records and checks it (second plugin author's review).

The dataset: documents d4, d1, d2, d3 (in that corpus order: not string order), query q1 judging
d4 relevant (grade 1). Every document scores 1.0: trec_eval breaks the tie by document id
descending (strcmp), so the ranking is d4, d3, d2, d1 and P@1 = 1.0 (the run file
"q1 Q0 d1 1 1 t / q1 Q0 d2 2 1 t / q1 Q0 d3 3 1 t / q1 Q0 d4 4 1 t" gives P_1 1.0000 in trec_eval 9 /
pytrec_eval).
"""

from __future__ import annotations

import json
import math
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
from retrievers.topk import run_from_topk, string_ranks


def dataset() -> Dataset:
    return Dataset("tiny", "test", Corpus(["d4", "d1", "d2", "d3"], [""] * 4, ["x"] * 4),
                   Queries(["q1"], ["x"]), Qrels.from_rows([("q1", "d4", 1)]))


class AllTied(Retriever):
    """Every document at 1.0, as a run over the corpus's own ids with the lookups ``build`` gives."""

    name = "all-tied"

    def __init__(self, build, params=None):
        self.build, self._params = build, params or {}

    def params(self) -> dict:
        return self._params

    def index(self, corpus):
        self.corpus = corpus

    def search(self, queries, k):
        n = len(self.corpus)
        return self.build(self.corpus, list(queries.ids), [np.arange(n)] * len(queries.ids),
                          [np.ones(n)] * len(queries.ids))


def p_at_1(build) -> float:
    return run_experiment(dataset(), AllTied(build), Evaluator(["P@1"], [1]), [1], depth=1).result.means["P@1"]


def test_a_run_over_the_corpus_ids_with_their_true_ranks_is_scored():
    # the corpus's own id_rank, and an equal array the plugin computed itself (retrievers.topk.string_ranks)
    assert p_at_1(lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array, id_rank=c.id_rank)) == 1.0
    assert p_at_1(lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_column,
                                                        id_rank=string_ranks(c.ids))) == 1.0
    assert p_at_1(lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array)) == 1.0


@pytest.mark.parametrize("build", [
    # ranks that are not the ids' string ranks: the corpus taken as sorted, argsort taken for ranks
    lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array, id_rank=np.arange(len(c))),
    lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_column, id_rank=np.arange(len(c))),
    lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array, id_rank=np.argsort(c.id_array)),
    # an id -> code dict that is not the corpus's order, and a vocabulary claimed sorted that is not
    lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array, {d: i for i, d in enumerate(sorted(c.ids))}),
    lambda c, q, chosen, s: Run.from_arrays(q, [0, len(c)], np.arange(len(c)), np.ones(len(c)), c.id_array,
                                            vocab_sorted=True),
], ids=["arange-rank", "arange-rank-column", "argsort-rank", "wrong-index", "sorted-claim"])
def test_wrong_lookups_over_the_corpus_ids_are_refused_not_scored(build):
    # The run's vocabulary is the corpus's id array (or column), so checked_run trusted it whole: its
    # tie order and id lookups were the plugin's wrong ones, P@1 0.0 (right: 1.0, see the docstring).
    with pytest.raises(HarnessError, match=r"retriever 'all-tied': search\(\) returned document"):
        p_at_1(build)


def test_params_that_are_not_json_are_recorded_as_json(tmp_path: Path):
    # A plugin's params() with numpy scalars, a Path, a set: json.dumps raised TypeError after the
    # whole search (and after the earlier result's metrics.json was removed); a NaN was written as the
    # bare NaN that strict JSON parsers refuse. Recorded as stats() are (reports.document.plain_json).
    params = {"alpha": np.float32(0.5), "n": np.int64(3), "flag": np.bool_(True), "path": Path("/tmp/x"),
              "fields": {"title"}, "weights": np.array([1.0, 2.0]), "nan": float("nan"), "inf": math.inf}
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "metrics.json").write_text("{}")  # an earlier result
    build = lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array)  # noqa: E731
    run_experiment(dataset(), AllTied(build, params), Evaluator(["P@1"], [1]), [1], depth=1, output_dir=folder)

    def strict(constant):
        raise AssertionError(f"metrics.json holds {constant}, which is not JSON")

    document = json.loads((folder / "metrics.json").read_text(encoding="utf-8"), parse_constant=strict)
    assert document["retriever"]["params"] == {"alpha": 0.5, "n": 3, "flag": True, "path": "/tmp/x",
                                               "fields": ["title"], "weights": [1.0, 2.0], "nan": None,
                                               "inf": None}
    assert document["metrics"]["P@1"] == 1.0


class ListStats(AllTied):
    """stats() returns a list (the docs ask for a dict)."""

    def stats(self):
        return [1, 2]


@pytest.mark.parametrize("measures_latency", [False, True])
def test_stats_that_are_not_a_dict_are_a_warning_not_a_traceback(tmp_path: Path, measures_latency):
    # Was: AttributeError: 'list' object has no attribute 'get', after the whole search (in the
    # efficiency block; with measures_latency, reading its query_latency_ms). metrics.json's
    # retriever_stats is an object or null (MetricsDocument refuses a list when it reads one back).
    retriever = ListStats(lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array))
    retriever.measures_latency = measures_latency
    run_experiment(dataset(), retriever, Evaluator(["P@1"], [1]), [1], depth=1, output_dir=tmp_path)
    document = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert document.get("retriever_stats") is None  # (a None field is left out)
    assert "retriever 'all-tied': stats() returned list, not a dict: not recorded" in document["warnings"]
    assert document["metrics"]["P@1"] == 1.0


def test_annotations_resolve_one_by_one_when_one_names_a_type_checking_import(tmp_path, monkeypatch):
    # `from __future__ import annotations` with a name imported under TYPE_CHECKING: get_type_hints failed for
    # the whole constructor and every check was dropped (-p mode=slow -p top=2.5 accepted for Literal and int)
    from harness.errors import ConfigError
    from harness.params import check_params

    (tmp_path / "tc_plugin.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING, Literal\n"
        "from harness.retriever import Retriever\n"
        "if TYPE_CHECKING:\n"
        "    from sentence_transformers import SentenceTransformer\n"
        "class TC(Retriever):\n"
        "    name = 'tc'\n"
        "    def __init__(self, mode: Literal['fast', 'exact'] = 'fast', top: int = 10,\n"
        "                 model: SentenceTransformer | None = None):\n"
        "        self.mode, self.top = mode, top\n"
        "    def params(self): return {}\n"
        "    def index(self, corpus): pass\n"
        "    def search(self, queries, k): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import tc_plugin

    check_params(tc_plugin.TC, {"mode": "exact", "top": 3}, "cli", "param", "tc")  # valid: accepted
    for params, message in (({"top": 2.5}, "expected an integer"), ({"mode": "slow"}, "expected one of")):
        with pytest.raises(ConfigError, match=message):
            check_params(tc_plugin.TC, params, "cli", "param", "tc")


def test_a_set_in_params_is_one_json_list_and_one_fingerprint_whatever_the_hash_seed(tmp_path):
    # json.dumps(default=str) wrote a set of str in an order that follows PYTHONHASHSEED: a bench cell whose
    # plugin reports a set was never reused (run twice with seeds 1 and 2: "1 run, 1 reused" expected 2 reused)
    import subprocess
    import sys

    from harness.reports.document import plain_json

    assert plain_json({"b", "c", "a"}) == ["a", "b", "c"] and plain_json({2, "x"}) == ["x", 2]  # (by JSON text: "\"x\"" < "2")
    code = ("from harness.bench.cells import fingerprint\n"
            "from harness.bench.config import RetrieverSpec\n"
            "spec = RetrieverSpec(type='m:S', label='s', params={})\n"
            "print(fingerprint({'f': 'x'}, 'test', spec, {'names': set('abcdefghij')}, {'k': [10]}))\n")
    prints = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout for seed in "123"}
    assert len(prints) == 1, prints


def test_a_pipeline_stage_whose_plugin_params_hold_numpy_values_is_cached_as_json(tmp_path):
    # the stage cache's JSON took params() raw: TypeError "Object of type float32 is not JSON serializable"
    from harness.pipeline import run_pipeline
    from harness.pipeline.spec import parse_pipeline

    spec = parse_pipeline({"name": "p", "stages": [{"name": "s", "type": "retrieve",
                                                     "retriever": "tests.cli.test_plugin_review2:NumpyParams"}]}, "p")
    from harness.pipeline.cache import StageCache

    exp, outcomes = run_pipeline(dataset(), spec, Evaluator(["P@1"], [1]), [1], depth=1, cache=StageCache(tmp_path))
    assert outcomes[0].info["resolved_params"] == {"weight": 0.5, "names": ["a", "b"]}
    assert exp.result.means["P@1"] == 1.0


class NumpyParams(AllTied):
    name = "numpy-params"

    def __init__(self):
        super().__init__(lambda c, q, chosen, s: run_from_topk(q, chosen, s, c.id_array, id_rank=c.id_rank),
                         {"weight": np.float32(0.5), "names": {"b", "a"}})
