"""A fuse stage's ``optimize`` grid is checked with the rest of the file (docs/pipelines.md: "The whole
file is checked before the dataset is loaded"), as ``harness fuse --optimize`` checks ``--k-grid`` and
``--step`` before reading a run. Before, a bad ``k_grid`` or ``step`` passed the parse and failed in
the fuse stage after the retrieval stages had run (``k_grid = [10.5]`` was even tried as k = 10)."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.pipeline import parse_pipeline

BM25 = {"name": "bm25", "type": "retrieve", "retriever": "bm25"}
BM25B = {"name": "bm25b", "type": "retrieve", "retriever": "bm25", "params": {"k1": 1.2}}


def _parse(tmp_path, method, optimize):
    (tmp_path / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    fuse = {"name": "f", "type": "fuse", "inputs": ["bm25", "bm25b"], "method": method,
            "optimize": {"qrels": "dev.tsv", **optimize}}
    return parse_pipeline({"stages": [BM25, BM25B, fuse]}, "p.toml", base=tmp_path)


@pytest.mark.parametrize("grid", [[-10, 20], [10.5], [], ["x"], [True]])
def test_bad_k_grid_is_a_config_error(tmp_path, grid):
    with pytest.raises(ConfigError, match=r"^p\.toml: stages\[2\]\.optimize\.k_grid: expected a non-empty list of "
                                          r"integers >= 0"):
        _parse(tmp_path, "rrf", {"k_grid": grid})


@pytest.mark.parametrize("step", [0.3, 0, -1, 2])
def test_step_that_does_not_divide_1_is_a_config_error(tmp_path, step):
    with pytest.raises(ConfigError, match=r"^p\.toml: stages\[2\]\.optimize: weight step must divide 1"):
        _parse(tmp_path, "wsum", {"step": step})


def test_good_grids_pass(tmp_path):
    assert _parse(tmp_path, "rrf", {"k_grid": [0, 20]}).stages[2].optimize["k_grid"] == [0, 20]
    assert _parse(tmp_path, "wsum", {"step": 0.25}).stages[2].optimize["step"] == 0.25
