"""Components given to ``run_pipeline`` (``components={stage name: retriever or reranker}``).

Two defects of the Python API, both giving a number for another system than the caller's:

* a name that is no stage of the pipeline (``{"typo": BM25Retriever(k1=0.0)}``) was ignored: the stage ran
  the component its spec names, and the result (SciFact NDCG@10 0.6789, BM25's) was taken for the given one's;
* the stage key named the stage's spec (``retriever = "bm25"``) and the component's ``params()``, not its class:
  two classes of equal params given in turn to one stage had one key, and the second was served the first
  one's run from the stage cache ("hit").

Worked example (tests/test_plugin_code.py's): documents d1, d2, d3, query q1 judging d1 relevant (grade 1).
``Up`` scores each document by its position in the corpus (d1 last: NDCG@10 = 1 / log2(3 + 1) = 0.5), ``Down``
by minus it (d1 first: NDCG@10 = 1.0); both have ``params() == {}``.
"""

from __future__ import annotations

import pytest

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline.cache import StageCache
from harness.pipeline.run import create_components, run_pipeline
from harness.pipeline.spec import parse_pipeline
from harness.run import Run
from retrievers import Retriever
from tests.test_plugin_code import write_dataset


class Up(Retriever):
    name = "up"

    def params(self):
        return {}

    def index(self, corpus):
        self._ids = list(corpus.ids)

    def search(self, queries, k):
        return Run.from_dict({q: {d: float(i) for i, d in enumerate(self._ids)} for q in queries.ids})


class Down(Up):
    def search(self, queries, k):
        return Run.from_dict({q: {d: float(-i) for i, d in enumerate(self._ids)} for q in queries.ids})


PIPELINE = {"name": "pp", "stages": [{"name": "s", "type": "retrieve", "retriever": "bm25"}]}


def run(tmp_path, components, pipeline=PIPELINE):
    folder = tmp_path / "tiny"
    dataset = load_dataset(str(folder if folder.exists() else write_dataset(folder)))
    return run_pipeline(dataset, parse_pipeline(pipeline), Evaluator(["NDCG@10"]), [10],
                        cache=StageCache(tmp_path / "stages"), components=components)


def test_two_classes_of_equal_params_given_to_one_stage_have_their_own_runs(tmp_path):
    experiment, outcomes = run(tmp_path, {"s": Up()})
    assert outcomes[0].status == "miss" and experiment.document.metrics["NDCG@10"] == pytest.approx(0.5)
    experiment, outcomes = run(tmp_path, {"s": Down()})
    assert outcomes[0].status == "miss"  # it was "hit", with Up's 0.5
    assert experiment.document.metrics["NDCG@10"] == pytest.approx(1.0)
    record = experiment.document.stages[0]
    assert record["retriever"] == "bm25" and record["component_class"] == f"{__name__}:Down"
    experiment, outcomes = run(tmp_path, {"s": Up()})  # each its own entry: Up's read back
    assert outcomes[0].status == "hit" and experiment.document.metrics["NDCG@10"] == pytest.approx(0.5)
    assert experiment.document.stages[0]["component_class"] == f"{__name__}:Up"


def test_the_component_the_spec_names_keeps_its_key(tmp_path):
    # harness run --pipeline gives run_pipeline create_components' result: the classes the specs name, whose keys
    # name no class (every cached stage of a user stays a hit)
    pipeline = {"name": "pp", "stages": [{"name": "s", "type": "retrieve", "retriever": f"{__name__}:Up"}]}
    _, made = run(tmp_path, create_components(parse_pipeline(pipeline)), pipeline)
    _, own = run(tmp_path, None, pipeline)
    assert made[0].key == own[0].key and own[0].status == "hit"
    assert "component_class" not in made[0].record()


def test_a_name_that_is_no_stage_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"^components: 'typo' is no retrieve or rerank stage of pipeline 'pp' "
                                         r"\(its stages with a component: 's'\)$"):
        run(tmp_path, {"typo": Down()})  # it ran the stage's BM25, reported as the given retriever's
    assert not (tmp_path / "stages").exists()  # refused before any stage ran


def test_a_component_of_the_wrong_kind_is_refused(tmp_path):
    with pytest.raises(TypeError, match=r"^components\['s'\]: a retrieve stage needs a retriever \(index\(\), "
                                        r"search\(\)\), got str$"):
        run(tmp_path, {"s": "bm25"})
    with pytest.raises(TypeError, match=r"^components must be a dict"):
        run(tmp_path, [Down()])


CLOSED: list = []


class Closing(Up):
    def close(self):
        CLOSED.append(self)


def test_stages_left_out_of_the_given_components_are_made_and_closed(tmp_path):
    pipeline = {"name": "pp", "stages": [{"name": "a", "type": "retrieve", "retriever": f"{__name__}:Closing"},
                                         {"name": "b", "type": "retrieve", "retriever": f"{__name__}:Closing"},
                                         {"name": "f", "type": "fuse", "inputs": ["a", "b"], "method": "rrf"}]}
    CLOSED.clear()
    given = Closing()
    _, outcomes = run(tmp_path, {"a": given}, pipeline)
    assert [o.status for o in outcomes] == ["miss", "hit", "miss"]  # (b: a's run, the same class and params)
    assert len(CLOSED) == 1 and CLOSED[0] is not given  # stage b's, made here; a's is the caller's to close


class Refusing(Up):
    def __init__(self, **params):
        raise ValueError("refused: no index here")


def test_a_stage_left_out_whose_component_is_refused_fails_before_any_stage_runs(tmp_path):
    # the left-out stage's component was made when its turn came, after the stages before it had run
    pipeline = {"name": "pp", "stages": [{"name": "a", "type": "retrieve", "retriever": f"{__name__}:Up"},
                                         {"name": "b", "type": "retrieve", "retriever": f"{__name__}:Refusing"}]}
    given = Up()
    with pytest.raises(Exception, match=r"stage 'b': refused: no index here"):
        run(tmp_path, {"a": given}, pipeline)
    assert not hasattr(given, "_ids")  # stage a did not run (it indexed first, then failed at b)
