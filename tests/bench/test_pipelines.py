"""``[[pipelines]]`` in bench configs: a pipeline is a column, its stages are ``pipeline/stage`` rows.

On the tiny hand-made dataset (bench_helpers): the run-file stage's NDCG@3 is worked by hand in
test_bench.py (NDCG3_RUN_FILE); the pipeline's column is its last stage's value.
"""

from __future__ import annotations

import json

import pytest

from harness.bench import load_config, run_bench
from harness.errors import ConfigError

from .bench_helpers import write_tiny
from .test_bench import NDCG3_RUN_FILE, write_config

PIPELINE = """
[[pipelines]]
label = "hybrid"
[[pipelines.stages]]
name = "mine"
type = "retrieve"
retriever = "run-file"
params = {{ path = "{run}" }}
[[pipelines.stages]]
name = "bm25"
type = "retrieve"
retriever = "bm25"
[[pipelines.stages]]
name = "rrf"
type = "fuse"
inputs = ["mine", "bm25"]
[[pipelines.stages]]
name = "len"
type = "rerank"
input = "rrf"
reranker = "tests.pipeline.fakes:LengthReranker"
depth = 2
"""


@pytest.fixture
def config(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 d1 1 3.0 s\nq1 Q0 d3 2 2.0 s\nq1 Q0 d2 3 1.0 s\n")
    body = (f'cache_dir = "{tmp_path / "cache"}"\ndatasets = [{{path = "{tiny}", label = "tiny"}}]\n'
            f'[[retrievers]]\ntype = "bm25"\n' + PIPELINE.format(run=run))
    return write_config(tmp_path, body)


def test_pipeline_cells_columns_and_stage_rows(config):
    cfg = load_config(config)
    assert [p.label for p in cfg.pipelines] == ["hybrid"] and len(cfg.pipelines[0].stages) == 4
    result = run_bench(cfg)
    assert result.counts["run"] == 2 and not result.failed
    board = result.board
    assert board["retrievers"] == ["bm25", "hybrid"]
    doc = json.loads((cfg.folder / "tiny" / "hybrid" / "metrics.json").read_text())
    by_stage = {s["name"]: s["metrics"] for s in doc["stages"]}
    rows = board["stages"]["NDCG@3"]
    assert list(rows) == ["hybrid/mine", "hybrid/bm25", "hybrid/rrf", "hybrid/len"]
    assert rows["hybrid/mine"]["tiny"] == pytest.approx(NDCG3_RUN_FILE, abs=1e-12)
    assert {label.split("/")[1]: row["tiny"] for label, row in rows.items()} == {k: v["NDCG@3"] for k, v in by_stage.items()}
    assert board["tables"]["NDCG@3"]["rows"]["tiny"]["hybrid"] == by_stage["len"]["NDCG@3"]
    assert board["tables"]["NDCG@3"]["rows"]["tiny"]["bm25"] == by_stage["bm25"]["NDCG@3"]
    text = (cfg.folder / "leaderboard.md").read_text()
    assert "## Pipeline stages: NDCG@3" in text and f"| hybrid/mine | {NDCG3_RUN_FILE:.4f} |" in text
    assert (cfg.folder.parent.parent / "cache" / "pipelines").is_dir()  # the config's cache_dir holds the stages
    again = run_bench(load_config(config))
    assert again.counts["reused"] == 2


@pytest.mark.parametrize("pipelines,message", [
    ('[[pipelines]]\n[[pipelines.stages]]\nname = "a"\ntype = "retrieve"\nretriever = "bm25"\n',
     "9: pipelines[0].label: missing required key"),  # (line 9: the [[pipelines]] lacking it)
    ('[[pipelines]]\nlabel = "bm25"\n[[pipelines.stages]]\nname = "a"\ntype = "retrieve"\nretriever = "bm25"\n',
     '10: pipelines[0].label: "bm25" is also a retriever label'),
    ('[[pipelines]]\nlabel = "p"\n[[pipelines.stages]]\nname = "a"\ntype = "fuse"\ninputs = ["x", "y"]\n',
     '14: pipelines[0].stages[0].inputs[0]: unknown stage "x"'),
    ('[[pipelines]]\nlabel = "p"\n[[pipelines.stages]]\nname = "a"\ntype = "retrieve"\nretriever = "bm25"\n'
     'params = { k9 = 1 }\n', "15: pipelines[0].stages[0].params.k9: unknown parameter"),
])
def test_config_errors_name_the_pipeline_stage(tmp_path, pipelines, message):
    path = write_config(tmp_path, '[[datasets]]\nname = "scifact"\n[[retrievers]]\ntype = "bm25"\n' + pipelines)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:{message}"), str(info.value)  # (<file>:<line>: <key>: ...)


def test_a_config_may_hold_only_pipelines(tmp_path):
    path = write_config(tmp_path, '[[datasets]]\nname = "scifact"\n[[pipelines]]\nlabel = "p"\n'
                                  '[[pipelines.stages]]\nname = "a"\ntype = "retrieve"\nretriever = "bm25"\n')
    cfg = load_config(path)
    assert cfg.retrievers == () and cfg.to_dict()["pipelines"][0]["label"] == "p"
    path = write_config(tmp_path, '[[datasets]]\nname = "scifact"\n')
    with pytest.raises(ConfigError, match=r"retrievers: missing required key \(or \[\[pipelines\]\]\)"):
        load_config(path)
