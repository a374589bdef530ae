"""Both of the report's warnings for a dataset it cannot find say how to give it (NFCorpus review: the
titles warning suggested `harness datasets download` for a result made from a local folder, the judgments
warning `--dataset`, which fixes both)."""

from __future__ import annotations

from harness.compare import load_system
from harness.reports.html.model import ResultInfo, load_judgments
from tests.compare.helpers import values, write_result


def test_both_warnings_of_a_dataset_not_found_name_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    system = load_system(str(write_result(tmp_path / "r", values("NDCG@10", [0.5, 0.25]))))
    out = load_judgments(system, ResultInfo(dataset="my-local-folder", split="test"), None, lambda: [])
    assert len(out.warnings) == 2
    assert out.warnings[0].startswith("no document titles: ")
    assert all(w.endswith("(give the dataset with --dataset)") for w in out.warnings), out.warnings
