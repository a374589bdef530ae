"""FusionSpec.create takes numpy's integers for k and depth, as the evaluator, run_experiment and run_pipeline
take them for cutoffs and depth (review s19api: FusionSpec.create(k=np.int64(60)) was refused, "RRF k must be an
integer >= 0 ..., got np.int64(60)"), and stores them as ints (to_dict is written to metrics.json as JSON)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.fusion.spec import FusionSpec


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint16])
def test_numpy_integers_are_the_same_spec(kind):
    spec = FusionSpec.create("rrf", k=kind(60), depth=kind(100))
    assert spec == FusionSpec.create("rrf", k=60, depth=100)
    assert json.dumps(spec.to_dict()) == '{"method": "rrf", "norm": "none", "k": 60, "weights": null, "depth": 100}'


@pytest.mark.parametrize("k, depth", [(np.float64(2.5), 10), (np.bool_(True), 10), (60, np.float64(10.0)), (60, np.int64(0))])
def test_what_is_no_integer_is_still_refused(k, depth):
    with pytest.raises(ValueError, match="must be an integer"):
        FusionSpec.create("rrf", k=k, depth=depth)
