"""configs/beir-bm25.toml as the README runs it: ``HARNESS_AUTO_DOWNLOAD=1 harness bench``, the bench fetching a
dataset that is not in the cache before it runs its cell. Here NFCorpus's zip (built from ../shared's copy) is
served on 127.0.0.1 as a BEIR mirror (``HARNESS_BEIR_MIRROR``), the registry's md5 pointed at it.

Expected NFCorpus row (this harness's BM25, docs/bm25.md): NDCG@10 0.3206, Recall@100 0.2457, Recall@1000 0.3701
(Anserini's flat 0.3218 / 0.2457 / 0.3704: float32 ties at ranks 10 and 1,000 ordered the other way)."""

from __future__ import annotations

from pathlib import Path

from harness.bench import load_config, run_bench
from harness.bench.config import parse_config
from harness.datasets import download as dl
from tests.datasets.http_fixture import FlakyServer
from tests.datasets.test_download import cache, nfcorpus_zip, registry_md5  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parents[2]


def test_the_bench_downloads_a_missing_dataset_first_with_auto_download(cache, registry_md5, nfcorpus_zip,  # noqa: F811
                                                                       tmp_path, monkeypatch):
    whole = load_config(REPO / "configs/beir-bm25.toml").to_dict()
    whole["datasets"] = [d for d in whole["datasets"] if d["name"] == "nfcorpus"]
    whole["retrievers"] = [r for r in whole["retrievers"] if r["label"] == "bm25-flat"]  # (one cell: the download)
    whole["output_dir"] = str(tmp_path / "results")
    config = parse_config(whole, source="beir-bm25 (nfcorpus)")
    with FlakyServer({"nfcorpus.zip": nfcorpus_zip}) as server:
        monkeypatch.setenv(dl.MIRROR_ENV, server.base + "/ok")
        missing = run_bench(config)  # (without HARNESS_AUTO_DOWNLOAD: one line saying how to get it)
        assert missing.counts["failed"] == 1 and server.log == []
        assert "harness datasets download nfcorpus" in missing.outcomes[0].error
        monkeypatch.setenv("HARNESS_AUTO_DOWNLOAD", "1")
        result = run_bench(config)
        assert [entry[:2] for entry in server.log] == [("ok", "nfcorpus.zip")]  # fetched once
    assert result.counts["run"] == 1 and not result.failed
    metrics = result.outcomes[0].document.metrics
    assert [round(metrics[m], 4) for m in ("NDCG@10", "Recall@100", "Recall@1000")] == [0.3206, 0.2457, 0.3701]
    assert (cache / "datasets" / "nfcorpus" / "corpus.jsonl").exists()
