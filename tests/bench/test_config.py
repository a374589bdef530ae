"""Config parsing and validation: the shipped configs, round trips, and every kind of error message."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench import BenchConfig, ConfigError, load_config, parse_config
from harness.bench.config import DEFAULT_K

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.toml"
    path.write_text(text)
    return path


MINIMAL = 'name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n'


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    # ``<file>:<line>: `` where the key (or the table lacking it) is written (tests/test_toml_lines.py checks
    # the lines); ``<file>: `` for a message naming no key
    where = f"{path}:{info.value.line}: " if info.value.line is not None else f"{path}: "
    assert message.startswith(where) and "\n" not in message, message
    assert info.value.line is None or 1 <= info.value.line <= text.count("\n") + 1
    return message[len(where):]


def test_quickstart_config():
    config = load_config(REPO / "configs/quickstart.toml")
    assert config.name == "quickstart" and config.folder == Path("results/quickstart")
    assert [d.to_dict() for d in config.datasets] == [{"name": "scifact", "split": "test", "label": "scifact"}]
    assert [(r.type, r.label, r.params["backend"]) for r in config.retrievers] == [
        ("bm25", "rank-bm25", "rank-bm25"), ("bm25", "lucene", "lucene")]
    assert config.metrics == ("NDCG@10", "Recall@100") and config.k == (1, 3, 5, 10, 100, 1000)


def test_beir_small_config_structure():
    # The dense retriever arrives from another branch, so only the structure is checked here.
    config = load_config(REPO / "configs/beir-small.toml", check_retrievers=False)
    assert [(d.kind, d.source, d.label) for d in config.datasets] == [
        ("name", "scifact", "scifact"), ("path", "../shared/datasets/nfcorpus", "nfcorpus")]
    assert [r.type for r in config.retrievers] == ["bm25", "dense"]


def test_defaults_and_round_trip(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.k == DEFAULT_K and config.metrics == ("NDCG@10",) and config.depth is None
    # no top-level split: each dataset's evaluation split (scifact: test), recorded per dataset; bench.json's
    # config said "split": "test" also where an msmarco cell used dev
    assert config.search_depth == 1000 and config.output_dir == "results" and config.split is None
    assert config.to_dict() == {
        "name": "b", "description": "", "output_dir": "results", "k": list(DEFAULT_K),
        "metrics": ["NDCG@10"], "relevance_threshold": 1.0, "ignore_identical_ids": True,
        "semantics": "trec_eval-9",
        "datasets": [{"name": "scifact", "split": "test", "label": "scifact"}],
        "retrievers": [{"type": "bm25", "label": "bm25", "params": {}}]}
    # Serialising and parsing again gives the same config.
    assert parse_config(config.to_dict(), source="again") == config


def test_full_config_round_trip(tmp_path):
    text = """
name = "full"
description = "d"
output_dir = "out"
split = "dev"
k = [100, 10, 1, 10]
depth = 50
metrics = ["ndcg_cut_10", "P@5", "nDCG@10"]
relevance_threshold = 2
ignore_identical_ids = false
semantics = "trec_eval-10"
cache_dir = "cache"
datasets = ["./some/folder", {path = "x/y", split = "test", label = "y-test"}, {name = "hf:BeIR/nfcorpus"}]
[[retrievers]]
type = "harness_example_plugin:IdfOverlapRetriever"
params = {min_df = 2}
"""
    config = load_config(write(tmp_path, text), check_retrievers=False)
    assert config.k == (1, 10, 100) and config.depth == 50 and config.search_depth == 50
    assert config.metrics == ("NDCG@10", "P@5")  # aliases canonicalised, duplicates dropped
    assert config.relevance_threshold == 2.0 and config.ignore_identical_ids is False
    assert config.semantics == "trec_eval-10"
    assert [(d.kind, d.source, d.split, d.label) for d in config.datasets] == [
        ("path", "./some/folder", "dev", "folder"), ("path", "x/y", "test", "y-test"),
        ("name", "hf:BeIR/nfcorpus", "dev", "hf-BeIR-nfcorpus")]
    assert config.retrievers[0].label == "IdfOverlapRetriever"
    assert config.folder == Path("out/full")
    assert parse_config(config.to_dict()) == config


@pytest.mark.parametrize("text, expected", [
    ("colour = 1\n" + MINIMAL,
     "colour: unknown key (expected one of: cache_dir, datasets, depth, description, executor, ignore_identical_ids, "
     "k, metrics, name, output_dir, pipelines, relevance_threshold, retrievers, semantics, split)"),
    ('datasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n', "name: missing required key"),
    ('name = "b"\n[[retrievers]]\ntype = "bm25"\n', "datasets: missing required key"),
    ('name = "b"\ndatasets = []\n[[retrievers]]\ntype = "bm25"\n', "datasets: expected a non-empty list"),
    ('name = 3\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n', "name: expected a string, got 3"),
    ('name = "a/b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n',
     'name: "a/b" is not allowed here: use letters, digits and . _ + = - (starting with a letter or digit)'),
    (MINIMAL.replace('name = "b"', 'name = "b"\nk = [10, "x"]'), 'k[1]: expected an integer, got "x"'),
    (MINIMAL.replace('name = "b"', 'name = "b"\nk = [0]'), "k[0]: expected an integer >= 1, got 0"),
    (MINIMAL.replace('name = "b"', 'name = "b"\nk = 10'), "k: expected a list, got 10"),
    (MINIMAL.replace('name = "b"', 'name = "b"\ndepth = 1.5'), "depth: expected an integer, got 1.5"),
    (MINIMAL.replace('name = "b"', 'name = "b"\nmetrics = ["NDCG@10", "nope@3"]'),
     "metrics[1]: unknown metric 'nope@3'; known: 11pt_avg, AP, DCG, Judged, MAP, MRR, NDCG, NDCG_all, P, R-Prec, "
     "RR, R_cap, Recall, Rndcg, Rprec_mult, Success, bpref, iprec_at_recall, ndcg_rel, num_nonrel_judged_ret, "
     "num_rel, num_rel_ret, num_ret, set_F, set_P, set_map, set_recall, set_relative_P"),
    (MINIMAL.replace('name = "b"', 'name = "b"\nignore_identical_ids = "yes"'),
     'ignore_identical_ids: expected true or false, got "yes"'),
    (MINIMAL.replace('name = "b"', 'name = "b"\nrelevance_threshold = 0'),
     "relevance_threshold: expected a positive finite number, got 0.0"),
    (MINIMAL.replace('name = "b"', 'name = "b"\nrelevance_threshold = inf'),  # (was accepted; each cell then failed)
     "relevance_threshold: expected a positive finite number, got Infinity"),
    (MINIMAL.replace('name = "b"', 'name = "b"\nsemantics = "trec_eval-8"'),
     'semantics: expected one of trec_eval-9, trec_eval-10, got "trec_eval-8"'),
    ('name = "b"\ndatasets = [{split = "test"}]\n[[retrievers]]\ntype = "bm25"\n',
     "datasets[0].name: missing required key (or path)"),
    ('name = "b"\ndatasets = [{name = "a", path = "b"}]\n[[retrievers]]\ntype = "bm25"\n',
     "datasets[0].name: give exactly one of name or path"),
    ('name = "b"\ndatasets = [{name = "a", folder = "b"}]\n[[retrievers]]\ntype = "bm25"\n',
     "datasets[0].folder: unknown key (expected one of: label, name, path, split)"),
    ('name = "b"\ndatasets = ["scifact", {path = "x/scifact"}]\n[[retrievers]]\ntype = "bm25"\n',
     'datasets[1].label: duplicate dataset label "scifact" (also datasets[0]); give each entry a distinct label'),
    ('name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\nlabel = "x"\n', "retrievers[0].type: missing required key"),
    ('name = "b"\ndatasets = ["scifact"]\nretrievers = [{type = "bm25"}, {type = "bm25"}]\n',
     'retrievers[1].label: duplicate retriever label "bm25" (also retrievers[0]); give each entry a distinct label'),
    ('name = "b"\ndatasets = ["scifact"]\nretrievers = [{type = "bm25", params = 3}]\n',
     "retrievers[0].params: expected a table, got 3"),
])
def test_structure_errors_name_the_key_path(tmp_path, text, expected):
    assert error_of(tmp_path, text) == expected


@pytest.mark.parametrize("retrievers, expected", [
    # The brief's own example: a string where the constructor's annotation says float.
    ('[[retrievers]]\ntype = "bm25"\n[[retrievers]]\ntype = "bm25"\nlabel = "b2"\nparams = { k1 = "abc" }\n',
     'retrievers[1].params.k1: expected a number, got "abc"'),
    ('[[retrievers]]\ntype = "bm25"\nparams = { k3 = 1 }\n',
     'retrievers[0].params.k3: unknown parameter for retriever "bm25" (it takes: backend, k1, b, '),
    ('[[retrievers]]\ntype = "bm25"\nparams = { stemmer = 5 }\n',
     "retrievers[0].params.stemmer: expected a string, got 5"),
    ('[[retrievers]]\ntype = "bm25"\nparams = { b = true }\n',
     "retrievers[0].params.b: expected a number, got true"),
    ('[[retrievers]]\ntype = "run-file"\n',
     'retrievers[0].params.path: missing required parameter of retriever "run-file"'),
    ('[[retrievers]]\ntype = "no-such-retriever"\n',
     "retrievers[0].type: unknown retriever 'no-such-retriever'; available: bm25, "),
    ('[[retrievers]]\ntype = "no_such_module:Thing"\n',
     "retrievers[0].type: cannot load retriever 'no_such_module:Thing': No module named 'no_such_module'"),
])
def test_retriever_errors_checked_against_the_constructor(tmp_path, retrievers, expected):
    # (Two messages list what exists, which grows as retrievers and parameters are added: prefix match.)
    message = error_of(tmp_path, 'name = "b"\ndatasets = ["scifact"]\n' + retrievers)
    assert message == expected or (expected.endswith(", ") and message.startswith(expected)), message


def test_params_check_follows_plugin_annotations(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "examples/plugin"))
    head = 'name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "harness_example_plugin:IdfOverlapRetriever"\n'
    assert error_of(tmp_path, head + "params = { min_df = 1.5 }\n") == \
        "retrievers[0].params.min_df: expected an integer, got 1.5"
    assert load_config(write(tmp_path, head + "params = { min_df = 2 }\n")).retrievers[0].params == {"min_df": 2}


def test_invalid_toml_and_missing_file(tmp_path):
    message = error_of(tmp_path, 'name = "b"\n= 3\n')
    assert message.startswith("invalid TOML: ") and "line 2" in message
    with pytest.raises(ConfigError, match=r"nope\.toml: cannot read config"):
        load_config(tmp_path / "nope.toml")


def test_config_is_frozen_data():
    config = parse_config({"name": "b", "datasets": ["scifact"], "retrievers": [{"type": "bm25"}]})
    assert isinstance(config, BenchConfig)
    with pytest.raises(AttributeError):
        config.name = "other"  # type: ignore[misc]


def test_beir_bm25_config_lists_every_registered_beir_dataset():
    """configs/beir-bm25.toml is the whole public suite: every dataset of the registry (BEIR's 15 downloadable
    test sets), each once, and BM25 with Anserini's flat and multifield settings, whose flat SciFact row is the
    committed baseline."""
    import json

    from harness.datasets import registry

    config = load_config(REPO / "configs/beir-bm25.toml")
    sources = [d.source for d in config.datasets]  # (cqadupstack read as its 12 forums, cqadupstack/android ...)
    assert sorted(dict.fromkeys(s.partition("/")[0] for s in sources)) == sorted(registry.names())
    assert len(registry.names()) == 15 and len(sources) == 14 + 12 == len(set(sources))
    assert all(d.kind == "name" for d in config.datasets)
    assert [(r.type, r.params) for r in config.retrievers] == [("bm25", {"k1": 0.9, "b": 0.4}),
                                                               ("bm25", {"k1": 0.9, "b": 0.4, "fields": "multifield"})]
    assert config.metrics == ("NDCG@10", "Recall@100", "Recall@1000") and config.search_depth == 1000
    baseline = json.loads((REPO / "results/baselines/scifact/bm25/metrics.json").read_text())["metrics"]
    assert "scifact      0.6789 / 0.9253 / 0.9767" in (REPO / "configs/beir-bm25.toml").read_text()
    assert [round(baseline[m], 4) for m in ("NDCG@10", "Recall@100")] == [0.6789, 0.9253]  # (Recall@1000: below)


def test_beir_bm25_config_scifact_cell_gives_anserinis_flat_figures(tmp_path, monkeypatch):
    """The config's SciFact cells, run (the bundled copy, no download): Anserini's flat NDCG@10 0.6789,
    Recall@100 0.9253 and Recall@1000 0.9767, and its multifield 0.6647, 0.9076 and 0.9800 (REFERENCE_SCORES.md
    section B), as the config's comment says."""
    from harness.bench import run_bench
    from harness.bench.config import parse_config

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    whole = load_config(REPO / "configs/beir-bm25.toml").to_dict()
    whole["datasets"] = [d for d in whole["datasets"] if d["name"] == "scifact"]
    whole["output_dir"] = str(tmp_path / "results")
    result = run_bench(parse_config(whole, source="beir-bm25 (scifact)"))
    assert result.counts["run"] == 2 and not result.failed
    rows = {o.cell.retriever.label: o.document.metrics for o in result.outcomes}
    assert {label: [round(metrics[m], 4) for m in ("NDCG@10", "Recall@100", "Recall@1000")]
            for label, metrics in rows.items()} == {"bm25-flat": [0.6789, 0.9253, 0.9767],
                                                    "bm25-multifield": [0.6647, 0.9076, 0.9800]}
