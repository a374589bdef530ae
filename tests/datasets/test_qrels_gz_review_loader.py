"""A dataset folder whose qrels are gzipped (harness/datasets/beir.py, load_beir_folder).

Seen with SciFact (shared/datasets/scifact) and ``gzip qrels/test.tsv``: ``harness run -d ./folder``
printed ``error: folder/qrels/test.tsv: no qrels for split 'test' (available: none)``, with the split's
judgments right beside it as ``test.tsv.gz``. A folder's qrels are read as plain text (BEIR's layout;
docs/datasets.md), so the file is not read; expected: the same one line, saying that ``test.tsv.gz`` is
there and is to be decompressed."""

from __future__ import annotations

import gzip
import shutil

import pytest

from harness.datasets import load_dataset
from harness.errors import InputError


def test_a_gzipped_split_is_named_in_the_no_qrels_error(scifact_dir, tmp_path):
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl.gz", "queries.jsonl.gz"):
        shutil.copy(scifact_dir / name, folder / name)
    (folder / "qrels" / "test.tsv.gz").write_bytes(gzip.compress((scifact_dir / "qrels" / "test.tsv").read_bytes()))
    with pytest.raises(InputError) as err:
        load_dataset(str(folder))
    message = str(err.value)
    assert message.startswith(f"{folder / 'qrels' / 'test.tsv'}: no qrels for split 'test' (available: none); ")
    assert "test.tsv.gz is there" in message and "decompress it" in message
    assert "\n" not in message
    # decompressed, it loads: SciFact's 300 test queries and 339 judgments (BEIR's SciFact test split)
    (folder / "qrels" / "test.tsv").write_bytes((scifact_dir / "qrels" / "test.tsv").read_bytes())
    (folder / "qrels" / "test.tsv.gz").unlink()
    ds = load_dataset(str(folder))
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (5183, 300, 339)
