"""The Python examples of README.md, docs/*.md and the package docstrings run as written and say what
they give.

Every fenced ```python block is extracted and run by a runner below (a new block without a runner
fails ``test_every_block_has_a_runner``). Names a block leaves to the reader (``bm25_run``,
``corpus``, ``dev_qrels``) are bound to small objects built here; lines that need the network
(Hugging Face hub, ir_datasets, a BEIR download) are left out, and the dense block, which encodes
SciFact's 5,183 documents (minutes on a CPU), is skipped with that reason. The values the examples
state in comments are checked where a small input gives them.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def python_blocks() -> dict[str, str]:
    """``{"docs/x.md#N": code}`` for every fenced python block (N counts from 1 in each file)."""
    blocks = {}
    for path in DOCS:
        found = re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)
        for n, code in enumerate(found, 1):
            blocks[f"{path.relative_to(REPO)}#{n}"] = code
    return blocks


def docstring_example(module: str) -> str:
    """The indented example of a package's module docstring."""
    source = (REPO / module).read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=False)
    lines = [line for line in doc.splitlines() if line.startswith("    ")]
    assert lines, f"{module}: no example in the docstring"
    return textwrap.dedent("\n".join(lines))


@pytest.fixture
def runs_and_qrels():
    from harness.qrels import Qrels
    from harness.run import Run

    bm25_run = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 2.0, "d5": 1.0}})
    dense_run = Run.from_dict({"q1": {"d2": 0.9, "d3": 0.8, "d6": 0.1}, "q2": {"d5": 0.7, "d4": 0.2}})
    qrels = Qrels.from_dict({"q1": {"d2": 1, "d3": 2}, "q2": {"d5": 1}})
    return bm25_run, dense_run, qrels


def tiny_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Vitamin D", "text": "vitamin d and bone health"}\n'
        '{"_id": "d2", "title": "", "text": "cancer risk of smoking"}\n'
        '{"_id": "d3", "title": "Sleep", "text": "sleep and vitamin intake"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "vitamin d bone"}\n'
                                          '{"_id": "q2", "text": "smoking cancer"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n",
                                                encoding="utf-8")
    return folder


# ---- the fenced blocks ------------------------------------------------------------------------------

def run_progress(code, tmp_path, runs_and_qrels, monkeypatch):
    from harness.datasets.corpus import Corpus

    corpus = Corpus(["a", "b", "c"], ["", "t", ""], ["x", "y", "z"])
    exec(code, {"corpus": corpus, "n": 3, "batch_size": 3})


def run_plugin(code, tmp_path, runs_and_qrels, monkeypatch):
    # the block is examples/plugin/harness_example_plugin.py with its docstring shortened
    example = (REPO / "examples/plugin/harness_example_plugin.py").read_text(encoding="utf-8")
    body = example.split('"""\n\nfrom __future__ import annotations\n', 1)[1]
    assert code.split('"""\n', 1)[1] == body, "docs/bench.md's plugin block differs from examples/plugin"
    namespace = {"__name__": "docs_plugin"}
    exec(code, namespace)
    from harness.datasets import load_dataset
    from harness.evaluation import evaluate

    ds = load_dataset(tiny_beir(tmp_path / "tiny"))
    retriever = namespace["IdfOverlapRetriever"]()
    retriever.index(ds.corpus)
    run = retriever.search(ds.queries, 10)
    assert evaluate(run, ds.qrels, k_values=[1]).means["P@1"] == 1.0
    assert retriever.params() == {"min_df": 1, "lowercase": True}
    with pytest.raises(ValueError, match="min_df must be an integer >= 1"):
        namespace["IdfOverlapRetriever"](min_df=0)


def run_datasets(code, tmp_path, runs_and_qrels, monkeypatch):
    # "nfcorpus" as a downloaded name: a folder in the cache; fiqa download, hf: and irds: need the network
    tiny_beir(tmp_path / "cache" / "datasets" / "nfcorpus")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    offline = [line for line in code.splitlines() if not re.search(r'"(fiqa|hf:|irds:)', line)]
    assert len(offline) == len(code.splitlines()) - 3
    namespace = {}
    exec("\n".join(offline), namespace)
    assert len(namespace["ds"].corpus) == 3 and namespace["ds"].load_s > 0


def run_dense(code, tmp_path, runs_and_qrels, monkeypatch):
    compile(code, "docs/dense.md", "exec")
    pytest.skip("encodes SciFact's 5,183 documents with MiniLM: minutes on a CPU (checked by hand: 0.645082)")


def run_fusion_spec(code, tmp_path, runs_and_qrels, monkeypatch):
    from harness.run import Run

    bm25_run, dense_run, _ = runs_and_qrels
    namespace = {"bm25_run": bm25_run, "dense_run": dense_run}
    exec(code, namespace)
    stated = ast.literal_eval(re.search(r"spec\.to_dict\(\)\s+# (\{.*\})", code).group(1))
    assert namespace["spec"].to_dict() == stated
    assert isinstance(namespace["fused"], Run)


def run_compare(code, tmp_path, runs_and_qrels, monkeypatch):
    from scipy.stats import ttest_rel

    from harness import evaluate

    bm25_run, dense_run, qrels = runs_and_qrels
    namespace = {"runs": {"bm25": bm25_run, "dense": dense_run}, "qrels": qrels}
    exec(code, namespace)
    # oracle: scipy's paired t-test of the two systems' per-query NDCG@10 (one comparison: Holm leaves p as it is)
    base, dense = (evaluate(run, qrels, ["NDCG@10"]).values["NDCG@10"] for run in (bm25_run, dense_run))
    expected = ttest_rel(dense, base).pvalue
    assert namespace["comparison"].cells[("dense", "NDCG@10")].p_value == pytest.approx(expected, abs=1e-12)


RUNNERS = {
    "docs/bench.md#1": run_progress,
    "docs/bench.md#2": run_plugin,
    "docs/compare.md#1": run_compare,
    "docs/datasets.md#1": run_datasets,
    "docs/dense.md#1": run_dense,
    "docs/fusion.md#1": run_fusion_spec,
}


def test_every_block_has_a_runner():
    assert sorted(python_blocks()) == sorted(RUNNERS)


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_block_runs(name, tmp_path, runs_and_qrels, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_PROGRESS", "0")
    RUNNERS[name](python_blocks()[name], tmp_path, runs_and_qrels, monkeypatch)


# ---- module docstrings and inline examples -----------------------------------------------------------

def test_fusion_docstring_runs(runs_and_qrels):
    """harness/fusion/__init__.py: it imported fuse and FusionSpec, then called optimize (NameError)."""
    from harness.fusion import FusionSpec

    bm25_run, dense_run, dev_qrels = runs_and_qrels
    namespace = {"bm25_run": bm25_run, "dense_run": dense_run, "dev_qrels": dev_qrels}
    exec(docstring_example("harness/fusion/__init__.py"), namespace)
    best = namespace["best"]
    assert isinstance(best.spec, FusionSpec) and best.spec.method == "wsum" and len(best.spec.weights) == 2
    assert 0.0 <= best.score <= 1.0


def test_fusion_optimize_as_documented(runs_and_qrels):
    """docs/fusion.md names ``harness.fusion.optimize(runs, qrels, spec, metric, split=...)``; the former
    ``harness.fusion.optimize.optimize`` is an AttributeError (the package's ``optimize`` is the function)."""
    import harness.fusion

    bm25_run, dense_run, qrels = runs_and_qrels
    best = harness.fusion.optimize([bm25_run, dense_run], qrels, harness.fusion.FusionSpec.create("rrf"),
                                   "NDCG@10", split="dev")
    assert best.spec.k in range(10, 101, 10)
    assert not hasattr(harness.fusion.optimize, "optimize")


def test_pipeline_docstring_runs(tmp_path, monkeypatch):
    """harness/pipeline/__init__.py: it loaded configs/pipeline.toml (no such file) and passed an
    evaluator whose cutoffs differed from the k list metrics.json records. Run here on a tiny folder
    with a BM25-only pipeline (examples/pipeline.toml needs MiniLM encoding and a cross-encoder download)."""
    from harness.datasets import load_dataset as real_load_dataset
    from harness.pipeline import load_pipeline

    code = docstring_example("harness/pipeline/__init__.py")
    assert load_pipeline(REPO / "examples/pipeline.toml").name == "bm25-minilm-rrf-ce"  # the file it names
    folder = tiny_beir(tmp_path / "tiny")
    (tmp_path / "pipeline.toml").write_text(
        'name = "two-bm25"\n[[stages]]\nname = "a"\ntype = "retrieve"\nretriever = "bm25"\n'
        '[[stages]]\nname = "b"\ntype = "retrieve"\nretriever = "bm25"\nparams = { k1 = 1.2, b = 0.75 }\n'
        '[[stages]]\nname = "rrf"\ntype = "fuse"\ninputs = ["a", "b"]\nmethod = "rrf"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    code = code.replace('load_dataset("scifact")', f'load_dataset({str(folder)!r})')
    code = code.replace('"examples/pipeline.toml"', '"pipeline.toml"')
    namespace = {}
    exec(code, namespace)
    document = namespace["experiment"].document
    assert [s.stage.name for s in namespace["stages"]] == ["a", "b", "rrf"]
    assert document.k_values == [10, 100]
    assert sorted(document.metrics) == sorted(f"{f}@{k}" for f in ("NDCG", "MAP", "Recall", "P", "R_cap", "MRR")
                                              for k in (10, 100))
    assert (tmp_path / "results/x/metrics.json").is_file()
    assert real_load_dataset  # (imported before the docstring's own import)


def test_readme_metric_examples():
    """README, "The full metric family": the Python spelling and parse_metric("map") is AP."""
    from harness.evaluation import Evaluator, parse_metric

    evaluator = Evaluator(["NDCG_exp@10", "bpref", "Success"], k_values=[1, 5, 10])
    assert [str(m) for m in evaluator.metrics] == ["NDCG_exp@10", "bpref", "Success@1", "Success@5", "Success@10"]
    assert str(parse_metric("map")) == "AP"
    assert [str(m) for m in Evaluator(k_values=[10]).metrics] == ["NDCG@10", "MAP@10", "Recall@10", "P@10",
                                                                 "R_cap@10", "MRR@10"]
    assert str(parse_metric("ndcg_EXP@10")) == "NDCG_exp@10"  # names are case-insensitive
    assert [str(m) for m in Evaluator(["P@5", "P_5"], k_values=[1]).metrics] == ["P@5"]  # named twice: once
    for name in ["P@５", "P(rel=2)@5", "precision@5-l2", "nope@3"]:
        with pytest.raises(ValueError):
            Evaluator([name])


def test_load_dataset_takes_a_path(tmp_path):
    """docs/datasets.md: ``load_dataset`` takes a "folder path"; a ``pathlib.Path`` failed with
    AttributeError: 'PosixPath' object has no attribute 'partition'. Same dataset as the str."""
    from harness.datasets import default_split, load_dataset

    folder = tiny_beir(tmp_path / "tiny")
    by_path, by_str = load_dataset(folder), load_dataset(str(folder))
    assert by_path.name == by_str.name and by_path.corpus.ids == by_str.corpus.ids == ["d1", "d2", "d3"]
    assert by_path.qrels.to_dict() == by_str.qrels.to_dict() == {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    assert default_split(folder) == "test"


def documented_names() -> set[tuple[str, str]]:
    """``(file, dotted name)`` of every ``harness.…`` / ``retrievers.…`` name quoted in the docs."""
    found = set()
    for path in DOCS:
        for match in re.finditer(r"`((?:harness|retrievers)(?:\.[A-Za-z_]\w*)+)", path.read_text(encoding="utf-8")):
            found.add((str(path.relative_to(REPO)), match.group(1)))
    return found


@pytest.mark.parametrize("where,dotted", sorted(documented_names()))
def test_documented_name_resolves(where, dotted):
    """Each name resolves as a user's ``import a.b.c; a.b.c.d(...)`` reads it: attribute by attribute from
    the top package, after importing the longest module prefix. (docs/fusion.md's
    ``harness.fusion.optimize.optimize`` did not: the package's ``optimize`` is the function.)"""
    import importlib

    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:end]))
            break
        except ModuleNotFoundError as exc:
            if exc.name in ("harness._trecrun", "retrievers.bm25._fastbm25"):
                pytest.skip(f"{exc.name}: the C extension is not built here")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        assert hasattr(obj, part), f"{where}: {dotted}: {'.'.join(parts[:i])} ({obj!r}) has no {part!r}"
        obj = getattr(obj, part)


def test_metrics_document_round_trip():
    """README, Output layout: ``MetricsDocument.from_json(json.load(f))`` / ``to_json()`` work on the parsed
    dict (a str is refused), and keys a newer version adds are kept when read and written back."""
    import json

    from harness.errors import InputError
    from harness.reports import MetricsDocument

    path = REPO / "results/baselines/scifact/bm25/metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["from_a_newer_version"] = {"x": 1}
    assert MetricsDocument.from_json(data).to_json() == data
    with pytest.raises(InputError, match="expected a JSON object"):
        MetricsDocument.from_json(path.read_text(encoding="utf-8"))
