"""A pipeline result's run.trec opens with an ir_metadata header, as ``harness run``'s does, and every run
reader of the harness reads it as the same run.

docs/efficiency.md: ``harness run`` writes its facts between ``# ir_metadata.start`` and ``# ir_metadata.end``
(the tag, the test collection, then its efficiency block). A pipeline's run.trec (``harness run --pipeline``,
a bench pipeline cell) had no header at all: the file, carried off alone, did not say what made it. Now it
has the tag (the pipeline's name, as its 6th column), ``data`` and ``stages`` (each stage's metrics.json
record less what differs between two runs of the same stages: cache status, timings, stats, metrics), then
``versions``. The harness's run reader skips ``#`` lines under either semantics (trec_eval 10's rule; the
header of ``harness run``'s run.trec is read so already), so evaluate, fuse, rerank and the run-file
retriever give the file with its header exactly what they give it without (expected: the same numbers,
byte for byte the same outputs).
"""

from __future__ import annotations

import json
import math

import pytest

from harness.bench import load_config, run_bench
from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.formats.trec import read_run
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.reports import efficiency
from tests.bench.bench_helpers import write_tiny
from tests.cli.test_cli import harness

STAGES = [
    {"name": "bm25", "type": "retrieve", "retriever": "bm25"},
    {"name": "rf", "type": "retrieve", "retriever": "run-file", "params": {"path": "RUN"}},
    {"name": "rrf", "type": "fuse", "inputs": ["bm25", "rf"]},
    {"name": "len", "type": "rerank", "input": "rrf", "reranker": "tests.pipeline.fakes:LengthReranker", "depth": 3},
]


@pytest.fixture
def result(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 3.0 a\nq1 Q0 d3 2 2.0 a\nq2 Q0 d4 1 1.0 a\n")
    stages = json.loads(json.dumps(STAGES).replace('"RUN"', json.dumps(str(tmp_path / "a.trec"))))
    pipeline = parse_pipeline({"name": "p", "stages": stages}, "p.toml")
    exp, _ = run_pipeline(load_dataset(str(tiny), "test"), pipeline, Evaluator(["NDCG@3", "P@1"]), [3],
                          output_dir=tmp_path / "out", cache=StageCache(tmp_path / "cache"))
    return tmp_path, tmp_path / "out" / "run.trec", exp


def test_pipeline_run_trec_has_the_header(result):
    _, path, exp = result
    lines = path.read_text().splitlines()
    header = [line for line in lines if line.startswith("#")]
    assert lines[:len(header)] == header  # (it opens the file)
    assert header[0] == "# ir_metadata.start" and header[-1] == "# ir_metadata.end"
    assert header[1] == '# tag: "p"' and all(line.endswith(" p") for line in lines[len(header):])
    facts = efficiency.parse_header(lines)
    assert list(facts) == ["tag", "data", "stages", "versions"]
    assert facts["data"] == {"test_collection": "tiny", "split": "test"}
    records = json.loads((path.parent / "metrics.json").read_text())["stages"]
    assert list(facts["stages"]) == ["bm25", "rf", "rrf", "len"]
    for record in records:
        stage = facts["stages"][record["name"]]
        assert stage["key"] == record["key"] and stage["type"] == record["type"]
        assert stage["depth"] == record["depth"] and stage["inputs"] == record["inputs"]
        assert not {"cache", "timings", "metrics", "stats", "n_queries"} & set(stage)
    assert facts["stages"]["len"]["reranker"] == "tests.pipeline.fakes:LengthReranker"
    assert facts["stages"]["len"]["depth"] == 3 and facts["stages"]["rrf"]["fusion_used"]["k"] == 60
    assert facts["stages"]["rf"]["resolved_params"]["sha256"] == records[1]["resolved_params"]["sha256"]
    assert facts["versions"]["runs_version"] == exp.document.versions["runs_version"]
    assert read_run(path).to_dict() == exp.run.to_dict()


@pytest.mark.parametrize("semantics", ["trec_eval-9", "trec_eval-10"])
def test_every_run_reader_reads_it_as_without_the_header(result, semantics):
    tmp_path, path, exp = result
    plain = tmp_path / "plain.trec"
    plain.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("#")))
    qrels, tiny = str(tmp_path / "tiny" / "qrels" / "test.tsv"), str(tmp_path / "tiny")
    out = {}
    for name, run in (("header", path), ("plain", plain)):
        folder = tmp_path / name
        folder.mkdir()
        commands = {
            "evaluate": ["evaluate", "--qrels", qrels, "--run", str(run), "--k", "3", "--semantics", semantics,
                         "--json", str(folder / "eval.json")],
            "fuse": ["fuse", "--run", str(run), "--run", str(tmp_path / "a.trec"), "--semantics", semantics,
                     "-o", str(folder / "fused.trec")],
            "rerank": ["rerank", "--run", str(run), "-d", tiny, "-r", "tests.pipeline.fakes:LengthReranker",
                       "--depth", "2", "--semantics", semantics, "-o", str(folder / "reranked.trec"), "-q"],
            "run-file": ["run", "-d", tiny, "-r", "run-file", "-p", f"path={run}", "--k", "3", "-m", "P@1",
                         "--semantics", semantics, "-o", str(folder / "rf"), "--name", "rf", "-q"],
        }
        for command, args in commands.items():
            proc = harness(*args)
            assert proc.returncode == 0, (command, proc.stderr)
        evaluated = json.loads((folder / "eval.json").read_text())
        replayed = json.loads((folder / "rf" / "tiny" / "rf" / "metrics.json").read_text())
        out[name] = (evaluated["metrics"], evaluated["per_query"], (folder / "fused.trec").read_bytes(),
                     (folder / "reranked.trec").read_bytes(), replayed["metrics"], replayed["per_query"],
                     [line for line in (folder / "rf" / "tiny" / "rf" / "run.trec").read_text().splitlines()
                      if not line.startswith("#")])
    assert out["header"] == out["plain"]
    assert out["header"][0]["NDCG@3"] == exp.result.means["NDCG@3"]  # (the pipeline's own figure)
    assert out["header"][4]["NDCG@3"] == exp.result.means["NDCG@3"]


def test_bench_pipeline_cell_has_the_header(tmp_path):
    tiny = write_tiny(tmp_path / "tiny")
    path = tmp_path / "b.toml"
    path.write_text(f'name = "b"\nk = [3]\nmetrics = ["NDCG@3"]\noutput_dir = "{tmp_path / "out"}"\n'
                    f'cache_dir = "{tmp_path / "cache"}"\ndatasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                    '[[pipelines]]\nlabel = "p"\n[[pipelines.stages]]\nname = "bm25"\ntype = "retrieve"\n'
                    'retriever = "bm25"\n')
    result = run_bench(load_config(path))
    assert not result.failed
    lines = (tmp_path / "out" / "b" / "tiny" / "p" / "run.trec").read_text().splitlines()
    assert lines[:2] == ["# ir_metadata.start", '# tag: "p"']
    assert list(efficiency.parse_header(lines)["stages"]) == ["bm25"]


def test_a_params_key_that_would_split_the_line_is_written_as_json():
    # a TOML quoted key holds anything: a line end in it wrote a line without '#' into the run file
    records = [{"name": "x", "type": "retrieve", "retriever": "m:R", "params": {"a\nb: #c": 1, "ok": math.pi},
                "inputs": [], "key": "k", "cache": "hit", "timings": {"key_s": 0.1}}]
    facts = efficiency.pipeline_header_facts(records, "p", {"name": "d", "split": "test"})
    assert facts == {"tag": "p", "data": {"test_collection": "d", "split": "test"},
                     "stages": {"x": {"type": "retrieve", "retriever": "m:R", "params": {"a\nb: #c": 1, "ok": math.pi},
                                      "inputs": [], "key": "k"}}}
    lines = efficiency.run_header(facts)
    assert all(line.startswith("#") and len(line.splitlines()) == 1 for line in lines)
    assert '#       "a\\nb: #c": 1' in lines
    assert efficiency.parse_header(lines) == facts
