"""The split evaluated when none is named is the dataset's evaluation split: dev for msmarco (BEIR reports
MS MARCO on dev; its test split is TREC DL 2019's 43 queries), test for the others (datasets UX review:
`harness run -d msmarco` evaluated test while the registry, `datasets list` and BEIR say dev)."""

from __future__ import annotations

import json

from harness.bench.config import parse_config
from harness.datasets import default_split, load_dataset


def _fake_downloaded_msmarco(root):
    folder = root / "datasets" / "msmarco"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                 for d, t in (("d1", "apple"), ("d2", "pear"))))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "dq", "text": "apple"}) + "\n"
                                          + json.dumps({"_id": "tq", "text": "pear"}) + "\n")
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\ndq\td1\t1\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\ntq\td2\t3\n")
    return folder


def test_default_split_follows_the_registry():
    assert default_split("msmarco") == "dev"
    assert [default_split(n) for n in ("scifact", "nfcorpus", "cqadupstack/android", "my/folder")] == ["test"] * 4
    assert default_split("irds:msmarco-passage") == "test" and default_split("hf:someone/msmarco") == "test"


def test_beirs_own_copies_on_the_hub_and_in_ir_datasets_take_the_registrys_split(monkeypatch):
    # hf:BeIR/msmarco and irds:beir/msmarco are BEIR's MS MARCO, which BEIR reports on dev (6,980 queries);
    # they took test, TREC DL 2019's 43 queries, while -d msmarco took dev (datasets review, session 15)
    assert [default_split(n) for n in ("hf:BeIR/msmarco", "hf:beir/msmarco", "irds:beir/msmarco")] == ["dev"] * 3
    assert [default_split(n) for n in ("hf:BeIR/nfcorpus", "irds:beir/scifact", "irds:beir/cqadupstack/android",
                                       "hf:BeIR/msmarco-qrels")] == ["test"] * 4
    import harness.datasets.hf as hf
    import harness.datasets.irds as irds

    asked = []

    def record(_id, split="test", **_kwargs):
        asked.append(split)
        raise RuntimeError("recorded")

    monkeypatch.setattr(irds, "load_irds_dataset", record)
    monkeypatch.setattr(hf, "load_hf_dataset", record)
    for name in ("irds:beir/msmarco", "hf:BeIR/msmarco", "irds:beir/scifact"):
        try:
            load_dataset(name)
        except RuntimeError:
            pass
    assert asked == ["dev", "dev", "test"]


def test_a_downloaded_msmarco_is_evaluated_on_dev_unless_told(tmp_path, monkeypatch, harness_cli):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    _fake_downloaded_msmarco(tmp_path)
    assert load_dataset("msmarco").split == "dev" and load_dataset("msmarco").queries.ids == ["dq"]
    assert load_dataset("msmarco", "test").queries.ids == ["tq"]
    done = harness_cli("run", "-d", "msmarco", "-r", "bm25", "--k", "1", "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out" / "msmarco" / "bm25" / "metrics.json").read_text())["dataset"]["split"] == "dev"


def test_a_bench_config_takes_each_datasets_evaluation_split_unless_it_names_one():
    config = parse_config({"name": "b", "datasets": ["msmarco", "scifact", {"name": "msmarco", "split": "test",
                                                                             "label": "dl19"}],
                           "retrievers": [{"type": "bm25"}]})
    assert [(d.label, d.split) for d in config.datasets] == [("msmarco", "dev"), ("scifact", "test"), ("dl19", "test")]
    config = parse_config({"name": "b", "split": "train", "datasets": ["msmarco"], "retrievers": [{"type": "bm25"}]})
    assert config.datasets[0].split == "train"


def test_a_registered_name_with_a_trailing_slash_is_that_name(tmp_path, monkeypatch, harness_cli):
    """`-d msmarco/` loaded the downloaded msmarco but as an unregistered name: split test (TREC DL 2019's
    queries), named "msmarco/", where `-d msmarco` evaluates dev (docs/datasets.md "Split": a registered name
    with or without a trailing slash is the same; a folder path is read by its own qrels/test.tsv)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    _fake_downloaded_msmarco(tmp_path)
    assert default_split("msmarco/") == "dev" and default_split("cqadupstack/android/") == "test"
    loaded = load_dataset("msmarco/")
    assert (loaded.name, loaded.split, loaded.queries.ids) == ("msmarco", "dev", ["dq"])
    done = harness_cli("run", "-d", "msmarco/", "-r", "bm25", "--k", "1", "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "out" / "msmarco" / "bm25" / "metrics.json").read_text())["dataset"]
    assert (written["name"], written["split"]) == ("msmarco", "dev")
    config = parse_config({"name": "b", "datasets": ["msmarco/"], "retrievers": [{"type": "bm25"}]})
    assert config.datasets[0].split == "dev"
    # a folder path is the folder's own qrels: test, whatever its name
    monkeypatch.chdir(tmp_path / "datasets")
    assert default_split("./msmarco") == "test" and load_dataset("./msmarco").queries.ids == ["tq"]


def test_datasets_info_names_a_registered_name_with_a_trailing_slash_as_that_name(harness_cli, tmp_path, monkeypatch):
    """`harness datasets info msmarco/` printed `name: msmarco/` where `harness run -d msmarco/` records
    `msmarco` (session review); the name is the parsed one."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    done = harness_cli("datasets", "info", "msmarco/", "--no-counts")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "name: msmarco"
