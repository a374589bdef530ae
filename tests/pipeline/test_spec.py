"""Pipeline specs: parsed once, every mistake one ConfigError naming the file and the stage's key path."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.fusion import FusionSpec
from harness.pipeline import Stage, load_pipeline, parse_pipeline

BM25 = {"name": "bm25", "type": "retrieve", "retriever": "bm25", "depth": 1000}
DENSE = {"name": "dense", "type": "retrieve", "retriever": "dense"}


def test_parses_stages_with_defaults():
    p = parse_pipeline({"name": "hybrid", "stages": [
        BM25, DENSE, {"name": "rrf", "type": "fuse", "inputs": ["bm25", "dense"], "k": 20},
        {"name": "ce", "type": "rerank", "input": "rrf", "reranker": "cross-encoder", "params": {"batch_size": 8}}]},
        "p.toml")
    assert p.name == "hybrid" and [s.name for s in p.stages] == ["bm25", "dense", "rrf", "ce"]
    assert p.stages[0] == Stage("bm25", "retrieve", (), "bm25", {}, 1000)
    assert p.stages[1].depth is None  # the run's depth
    assert p.stages[2].fusion == FusionSpec.create("rrf", k=20) and p.stages[2].inputs == ("bm25", "dense")
    assert p.stages[3] == Stage("ce", "rerank", ("rrf",), "cross-encoder", {"batch_size": 8}, 100)
    assert p.final.name == "ce"
    assert p.to_dict()["stages"][2] == {"name": "rrf", "type": "fuse", "inputs": ["bm25", "dense"], "method": "rrf",
                                        "norm": "none", "k": 20, "depth": 1000}
    assert parse_pipeline(p.to_dict(), "again") == p  # to_dict is the TOML form, defaults filled in


@pytest.mark.parametrize("stages,message", [
    ([], 'stages: expected a non-empty list of [[stages]] tables, got []'),
    ([{"name": "x", "retriever": "bm25"}], "stages[0].type: missing required key (expected one of: retrieve, fuse, rerank)"),
    ([{"name": "x", "type": "retrieve"}], "stages[0].retriever: missing required key"),
    ([BM25, {**BM25, "retriever": "dense"}], 'stages[1].name: duplicate stage name "bm25"'),
    ([{**BM25, "name": "a b"}], 'stages[0].name: "a b" is not allowed here'),
    ([{**BM25, "depth": 0}], "stages[0].depth: expected an integer from 1 to 2^63 - 1, got 0"),
    # (was accepted, then every cell failed with "OverflowError: Python int too large to convert to C long")
    ([{**BM25, "depth": 2**63}], "stages[0].depth: expected an integer from 1 to 2^63 - 1, got 9223372036854775808"),
    ([{**BM25, "inputs": ["x"]}], "stages[0].inputs: unknown key (expected one of: depth, name, params, retriever, type)"),
    ([BM25, {"name": "f", "type": "fuse", "inputs": ["bm25"]}],
     'stages[1].inputs: expected a list of two or more stage names, got ["bm25"]'),
    ([BM25, DENSE, {"name": "f", "type": "fuse", "inputs": ["bm25", "dnse"]}],
     'stages[2].inputs[1]: unknown stage "dnse" (earlier stages: bm25, dense)'),
    ([BM25, DENSE, {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"], "method": "borda"}],
     "stages[2]: unknown fusion method 'borda'"),
    ([BM25, DENSE, {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"], "weights": [1.0]}],
     "stages[2]: 1 weights given for 2 runs"),
    ([{"name": "r", "type": "rerank", "input": "later", "reranker": "bi-encoder"}, {**BM25, "name": "later"}],
     'stages[0].input: unknown stage "later" (earlier stages: none)'),
    ([{**BM25, "retriever": "bm26"}], "stages[0].retriever: unknown retriever 'bm26'"),
    ([BM25, {"name": "r", "type": "rerank", "input": "bm25", "reranker": "cross-encoder", "params": {"modle": "x"}}],
     'stages[1].params.modle: unknown parameter'),
])
def test_mistakes_name_file_and_stage(stages, message):
    with pytest.raises(ConfigError) as info:
        parse_pipeline({"stages": stages}, "p.toml")
    assert str(info.value).startswith(f"p.toml: {message}"), str(info.value)


def test_optimize_block(tmp_path):
    (tmp_path / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    (tmp_path / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    fuse = {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"], "optimize": {"qrels": "dev.tsv"}}
    (tmp_path / "p.toml").write_text("")
    p = parse_pipeline({"stages": [BM25, DENSE, fuse]}, "p.toml", base=tmp_path)
    assert p.stages[2].optimize == {"qrels": str(tmp_path / "dev.tsv"), "metric": "NDCG@10", "split": "dev",
                                    "allow_test_split": False}
    with pytest.raises(ConfigError, match=r"^p\.toml: stages\[2\]\.optimize: refusing to optimise fusion on the test"):
        parse_pipeline({"stages": [BM25, DENSE, {**fuse, "optimize": {"qrels": "test.tsv"}}]}, "p.toml", base=tmp_path)
    with pytest.raises(ConfigError, match=r"stages\[2\]\.optimize: combsum has no parameter to optimise"):
        parse_pipeline({"stages": [BM25, DENSE, {**fuse, "method": "combsum"}]}, "p.toml", base=tmp_path)
    with pytest.raises(ConfigError, match=r"stages\[2\]\.optimize\.qrels: no such qrels file"):
        parse_pipeline({"stages": [BM25, DENSE, {**fuse, "optimize": {"qrels": "nope.tsv"}}]}, "p.toml", base=tmp_path)


def test_load_pipeline_names_it_after_the_file(tmp_path):
    path = tmp_path / "my pipe.toml"
    path.write_text('[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n')
    assert load_pipeline(path).name == "my-pipe"
    path.write_text('[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\nparams = { k1 = "high" }\n')
    with pytest.raises(ConfigError, match=r"my pipe\.toml:5: stages\[0\]\.params\.k1: expected a number"):
        load_pipeline(path)


def test_shipped_pipeline_files_parse():
    from pathlib import Path

    from harness.bench import load_config

    repo = Path(__file__).resolve().parents[2]
    example = load_pipeline(repo / "examples" / "pipeline.toml")
    assert [(s.name, s.type) for s in example.stages] == [("bm25", "retrieve"), ("minilm", "retrieve"),
                                                          ("rrf", "fuse"), ("ce", "rerank")]
    bench = load_config(repo / "configs" / "pipelines.toml")
    assert [p.label for p in bench.pipelines] == ["rrf-bm25-minilm", "bm25-minilm-rerank100"]
    assert [r.label for r in bench.retrievers] == ["bm25", "minilm"]
    from harness.bench.config import parse_config

    assert parse_config(bench.to_dict()) == bench


def test_kept_depth_is_the_most_documents_the_last_stage_can_hold():
    """Worked examples of harness.pipeline.run.kept_depth (run depth 1000): a retrieve stage keeps its
    depth or the run's, a rerank min(its depth, its input's), a fuse min(its depth, the sum of its
    inputs'). The result records it and warns below a cutoff (it recorded 1000 for a rerank of 100)."""
    from harness.pipeline.run import kept_depth

    def kept(*stages):
        return kept_depth(parse_pipeline({"name": "p", "stages": list(stages)}, "p.toml", check_components=False),
                          1000)

    small = {**DENSE, "depth": 30}
    assert kept(DENSE) == 1000 and kept({**BM25, "depth": 100}) == 100
    assert kept(BM25, {"name": "ce", "type": "rerank", "input": "bm25", "reranker": "cross-encoder"}) == 100
    assert kept(small, {"name": "ce", "type": "rerank", "input": "dense", "reranker": "cross-encoder"}) == 30
    fuse = {"name": "f", "type": "fuse", "inputs": ["bm25", "dense"]}
    assert kept(BM25, DENSE, fuse) == 1000  # fuse's default depth
    assert kept({**BM25, "depth": 40}, small, fuse) == 70  # the union of 40 and 30 documents
    assert kept(BM25, small, {**fuse, "depth": 50}) == 50
