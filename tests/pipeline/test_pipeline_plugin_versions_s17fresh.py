"""A pipeline's metrics.json names its plugin stages' code (harness/pipeline/run.py), as ``harness run``'s does.

``harness run -r pkg:Class`` records ``versions.plugin_code`` (``{"pkg": "<sha256>"}``); a pipeline with
the same plugin as a stage recorded nothing of it (its stage key held it, the result did not say it):
two results of an edited plugin, NDCG@10 0.5 and 1.0, were told apart by nothing in their files.
Expected: ``versions.plugin_code`` of each plugin stage's package, the digest computed here by the
docstring's formula (tests/test_plugin_code.py ``expected_digest``); a built-in stage adds nothing.
Worked example (tests/test_plugin_code.py): SIGN = 1 puts d1 at rank 3, NDCG@10 = 1 / log2(4) = 0.5.
"""

from __future__ import annotations

import json

import pytest

from tests.test_plugin_code import expected_digest, harness_cli, write_dataset, write_plugin


def test_a_pipeline_result_records_its_plugin_stages_code(tmp_path):
    root, data = tmp_path / "plugins", write_dataset(tmp_path / "tiny")
    package = write_plugin(root, 1)
    config = tmp_path / "p.toml"
    config.write_text('name = "pp"\n[[stages]]\nname = "pos"\ntype = "retrieve"\n'
                      'retriever = "planted_plugin.retriever:PositionRetriever"\n'
                      '[[stages]]\nname = "bm25"\ntype = "retrieve"\nretriever = "bm25"\n'
                      '[[stages]]\nname = "rrf"\ntype = "fuse"\ninputs = ["pos", "bm25"]\n')
    harness_cli(["run", "--pipeline", str(config), "-d", str(data), "-o", str(tmp_path / "res"), "-q", "--k", "10"],
                root, tmp_path / "cache", tmp_path)
    document = json.loads((tmp_path / "res" / "tiny" / "pp" / "metrics.json").read_text())
    assert document["stages"][0]["metrics"]["NDCG@10"] == pytest.approx(0.5)
    assert document["versions"]["plugin_code"] == {"planted_plugin": expected_digest(package)}  # was absent


def test_a_pipeline_of_built_ins_records_no_plugin_code(tmp_path):
    data = write_dataset(tmp_path / "tiny")
    config = tmp_path / "p.toml"
    config.write_text('name = "pb"\n[[stages]]\nname = "bm25"\ntype = "retrieve"\n'
                      'retriever = "retrievers.bm25:BM25Retriever"\n')
    harness_cli(["run", "--pipeline", str(config), "-d", str(data), "-o", str(tmp_path / "res"), "-q", "--k", "10"],
                tmp_path, tmp_path / "cache", tmp_path)
    document = json.loads((tmp_path / "res" / "tiny" / "pb" / "metrics.json").read_text())
    assert "plugin_code" not in document["versions"]
