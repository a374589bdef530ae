"""A bench pipeline's rerank stage given a depth its input cannot hold is refused when the config is read.

docs/pipelines.md: a rerank ``depth`` given larger than its input holds is refused before anything runs,
one line naming the file and the key. A retrieve stage without a depth of its own keeps the run's, which in a
bench is the config's ``depth``, else the largest cutoff of ``k`` and ``metrics`` (``search_depth``). The
config reader checked only the file's own depths, so such a pipeline was refused when its cell ran: the
other cells ran, the cell failed (exit 1), and its line named ``stages[1].depth`` (no ``pipelines[i].``)
and ``--depth``, an option bench has not. Expected (worked example): with ``k = [10]`` and NDCG@10 the
run's depth is 10, so ``depth = 100`` on a rerank of a bm25 stage without one is refused at
``pipelines[0].stages[1].depth``, exit 2, nothing run or written; ``depth = 100`` at the top, ``k = [10,
100]``, or the metric AP (a whole-ranking metric: depth 1000) hold 100, and are accepted.
"""

from __future__ import annotations

import pytest

from harness.bench import load_config, parse_config, run_bench
from harness.bench.config import read_toml
from harness.errors import ConfigError
from tests.cli.test_cli import harness

PIPELINE = """
[[pipelines]]
label = "p"
[[pipelines.stages]]
name = "bm25"
type = "retrieve"
retriever = "bm25"
[[pipelines.stages]]
name = "ce"
type = "rerank"
input = "bm25"
reranker = "cross-encoder"
params = { model = "no/such-model" }
depth = 100
"""


def _config(tmp_path, head: str = 'k = [10]\n') -> str:
    path = tmp_path / "b.toml"
    path.write_text(f'name = "b"\n{head}output_dir = "{tmp_path / "out"}"\ncache_dir = "{tmp_path / "cache"}"\n'
                    '[[datasets]]\nname = "scifact"\n[[retrievers]]\ntype = "bm25"\n' + PIPELINE)
    return str(path)


def _message(path: str) -> str:
    """(Line 22 of :func:`_config`'s file, with the default head, is the stage's ``depth = 100``.)"""
    return (f"{path}:22: pipelines[0].stages[1].depth: 100 candidates per query, but its input 'bm25' holds at most 10 "
            "with the run's depth 10 (the config's depth, else the largest cutoff of its k and metrics); give "
            "depth = 100 in the config or a depth to the stages before it, or this one a smaller depth")


def test_load_config_refuses_it(tmp_path):
    path = _config(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == _message(path)


def test_run_bench_refuses_it_before_any_cell(tmp_path):
    path = _config(tmp_path)
    config = parse_config(read_toml(path), path)  # (read in Python: load_config's check not applied)
    with pytest.raises(ConfigError) as info:
        run_bench(config)
    assert str(info.value) == _message(path)
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_cli_one_line_exit_2_nothing_run(tmp_path):
    path = _config(tmp_path)
    proc = harness("bench", path, "-q")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {_message(path)}"]
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()  # (the bm25 cell ran)


@pytest.mark.parametrize("head", ['k = [10]\ndepth = 100\n', 'k = [10, 100]\n', 'k = [10]\nmetrics = ["AP"]\n'])
def test_a_run_depth_that_holds_it_is_accepted(tmp_path, head):
    config = load_config(_config(tmp_path, head))
    assert config.search_depth >= 100
