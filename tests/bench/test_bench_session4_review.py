"""Review of the session's latest bench commits (fresh eyes): each test fails without its fix."""

from __future__ import annotations

import math

import numpy as np

from harness.bench import run_bench
from harness.bench.cells import fingerprint
from harness.bench.config import RetrieverSpec, parse_config
from harness.run import Run
from retrievers import Retriever

from .bench_helpers import write_tiny


class FloorRetriever(Retriever):
    """Every document whose number (d1 -> 1) is above ``floor``, scored by that number: ``floor = inf``
    returns nothing, ``floor = -inf`` every document (d4 first)."""

    name = "floor"

    def __init__(self, floor: float = 0.0):
        self.floor = floor

    def params(self) -> dict:
        return {"floor": self.floor}

    def index(self, corpus) -> None:
        self.ids = list(corpus.ids)

    def search(self, queries, k: int) -> Run:
        return Run.from_dict({q: {d: float(d[1:]) for d in self.ids if float(d[1:]) > self.floor}
                              for q in queries.ids})


def test_infinite_and_nan_params_are_distinct_fingerprints():
    # 0c1cb31 normalised fingerprints through plain_json, which writes NaN, inf and -inf as None (strict
    # JSON): the four params below made one fingerprint, so a cell of one was reused for the others.
    evaluation = {"metrics": ["NDCG@10"]}
    prints = set()
    for value in (math.inf, -math.inf, math.nan, None, np.float64(-math.inf)):
        spec = RetrieverSpec("bm25", "x", {"t": value})
        prints.add(fingerprint({}, "test", spec, {"t": value}, evaluation))
    assert len(prints) == 4  # (the numpy -inf is the float -inf)
    # equal numbers are still one fingerprint (k1 = 1 and 1.0), as 0c1cb31 made them
    one = [fingerprint({}, "test", RetrieverSpec("bm25", "x", {"k1": v}), {"k1": v}, evaluation) for v in (1, 1.0)]
    assert one[0] == one[1]


def test_a_cell_of_floor_inf_is_not_reused_for_floor_minus_inf(tmp_path):
    # floor = -inf returns d4, d3, d2, d1 for both queries: NDCG@1 = mean(q1: d4 unjudged -> 0, q2: d4 grade 1
    # -> 1) = 0.5 (worked by hand from bench_helpers' qrels); floor = inf returns nothing: 0.0. Without the fix
    # the second cell was "reused" with the first one's 0.0.
    write_tiny(tmp_path / "tiny")
    results = []
    for floor in (math.inf, -math.inf):
        config = parse_config({"name": "b", "output_dir": str(tmp_path / "out"), "k": [1], "depth": 1,
                               "datasets": [str(tmp_path / "tiny")],
                               "retrievers": [{"type": f"{__name__}:FloorRetriever", "label": "f",
                                               "params": {"floor": floor}}]})
        outcome = run_bench(config).outcomes[0]
        results.append((outcome.status, outcome.document.metrics["NDCG@1"]))
    assert results == [("run", 0.0), ("run", 0.5)]


class NumpyKeysRetriever(FloorRetriever):
    """params() with a numpy integer key (a dict built over a numpy array): what plain_json writes as "1"."""

    def params(self) -> dict:
        return {"floor": self.floor, "weights": {np.int64(1): 0.5}}


def test_params_with_numpy_keys_run_and_are_reused_without_force(tmp_path):
    # ac2774d made the fingerprint plain JSON (numpy values, sets), but is_finished also computes the
    # fingerprint "as written" (json.dumps of the raw params), which raised TypeError ("keys must be str,
    # int, float, bool or None, not numpy.int64"): the cell failed on every run without --force (with
    # --force it ran). Expected: run, then reused (floor = -inf: NDCG@1 0.5, worked above).
    write_tiny(tmp_path / "tiny")
    config = parse_config({"name": "b", "output_dir": str(tmp_path / "out"), "k": [1], "depth": 1,
                           "datasets": [str(tmp_path / "tiny")],
                           "retrievers": [{"type": f"{__name__}:NumpyKeysRetriever", "label": "n",
                                           "params": {"floor": -math.inf}}]})
    outcomes = [run_bench(config).outcomes[0] for _ in range(2)]
    assert [(o.status, o.error) for o in outcomes] == [("run", None), ("reused", None)]
    assert outcomes[1].document.metrics["NDCG@1"] == 0.5
