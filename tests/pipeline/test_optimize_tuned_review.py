"""A fuse stage with ``optimize`` and the value it tunes (rrf's ``k``, wsum's ``weights``) ran with the grid's
best value in place of the one written, silently; it is now one line naming the file and the key, as
``harness fuse --k 30 --optimize`` is refused (tests/cli/test_fuse_optimize_tuned_review.py)."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.pipeline import parse_pipeline

BM25 = {"name": "bm25", "type": "retrieve", "retriever": "bm25"}
DENSE = {"name": "dense", "type": "retrieve", "retriever": "dense"}


@pytest.mark.parametrize("settings,message", [
    ({"method": "rrf", "k": 30},
     "p.toml: stages[2].k: does not apply with optimize, which tunes rrf's k (k_grid); give one or the other"),
    ({"method": "wsum", "weights": [0.7, 0.3]},
     "p.toml: stages[2].weights: does not apply with optimize, which tunes wsum's weights (step); give one or the "
     "other"),
])
def test_tuned_value_beside_optimize_is_refused(tmp_path, settings, message):
    (tmp_path / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    fuse = {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"], "optimize": {"qrels": "dev.tsv"}, **settings}
    with pytest.raises(ConfigError) as info:  # before: parsed, and the chosen value replaced it
        parse_pipeline({"stages": [BM25, DENSE, fuse]}, "p.toml", base=tmp_path)
    assert str(info.value) == message
    # rrf's weights are used by its optimisation (k tuned "with the given weights"): accepted
    rrf = {**fuse, "method": "rrf", "weights": [2, 1]}
    rrf.pop("k", None)
    parsed = parse_pipeline({"stages": [BM25, DENSE, rrf]}, "p.toml", base=tmp_path)
    assert parsed.stages[2].fusion.weights == (2.0, 1.0)
