"""DatasetRef: a dataset name parsed once (registry.json is the source of the names and forums)."""

from __future__ import annotations

from harness.datasets import DatasetRef
from harness.datasets import download as dl


def test_names_forums_and_hub_repos():
    forum = DatasetRef.parse("cqadupstack/android")
    assert (forum.text, forum.base, forum.subset, forum.info.name) == ("cqadupstack/android", "cqadupstack", "android",
                                                                       "cqadupstack")
    assert DatasetRef.parse("cqadupstack-android").subset == "android"
    # registry.json: the android forum has 22,998 documents and 699 test queries (MTEB's statistics).
    assert forum.sizes == {"corpus_docs": 22998, "queries": 699}
    whole = DatasetRef.parse("cqadupstack")
    assert whole.subset is None and whole.sizes == {"corpus_docs": 457199, "queries": 13145}
    assert DatasetRef.parse("cqadupstack/nope") == DatasetRef("cqadupstack/nope", "cqadupstack/nope")
    assert DatasetRef.parse("my-data").info is None and DatasetRef.parse("my-data").sizes == {}
    hub = DatasetRef.parse("hf:BeIR/nfcorpus")
    assert hub.hf_repo == "BeIR/nfcorpus" and hub.info is None
    assert DatasetRef.parse(forum) is forum  # parsed once, passed on as the value


def test_cache_folders(monkeypatch, tmp_path):
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path))
    assert dl.dataset_dir(DatasetRef.parse("cqadupstack-android")) == tmp_path / "datasets" / "cqadupstack" / "android"
    assert dl.dataset_dir("nfcorpus") == tmp_path / "datasets" / "nfcorpus"
