"""Qrels repos that are not TSV (session review of the hf qrels reader, commit 118db89).

The qrels are read with pandas' CSV options (``na_filter``, ``quoting``) so that TSV ids stay verbatim;
``datasets``' parquet and JSON builders refuse those options ("BuilderConfig ParquetConfig(...)
doesn't have a 'na_filter' key"), so a qrels repo in parquet (as the hub's parquet conversions and
MTEB-style repos hold them) or JSON lines no longer loaded at all, where before that commit it did.
Expected values: the judgments as written into the file (q1: d1 grade 1, NA grade 2).
"""

from __future__ import annotations

import json

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
datasets = pytest.importorskip("datasets")

from harness.datasets.hf import load_hf_dataset  # noqa: E402
from tests.datasets.test_hf import write_hub_repo  # noqa: E402

@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_hf_qrels_in_parquet_or_json_lines_load(tmp_path, fmt):
    repo, qrels = write_hub_repo(tmp_path, ["d1", "NA"], ["q1"])
    rows = {"query-id": ["q1", "q1"], "corpus-id": ["d1", "NA"], "score": [1, 2]}
    if fmt == "parquet":
        pq.write_table(pa.table(rows), qrels / "test.parquet")
    else:
        (qrels / "test.jsonl").write_text("".join(json.dumps(dict(zip(rows, values))) + "\n"
                                                  for values in zip(*rows.values())))
    dataset = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert dataset.qrels.to_dict() == {"q1": {"d1": 1, "NA": 2}}
