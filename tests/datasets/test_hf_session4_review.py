"""Fresh-eyes review of the hf: qrels read line by line (4c2a75f): each test fails without its fix.

No network: a local folder laid out like a hub repo (``test_hf.write_hub_repo``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from harness.datasets.hf import load_hf_dataset  # noqa: E402
from harness.errors import InputError  # noqa: E402
from harness.formats.trec import read_beir_qrels  # noqa: E402

from tests.datasets.test_hf import write_hub_repo  # noqa: E402

LONE_CR = b"query-id\tcorpus-id\tscore\nq1\td1\t1\rq1\td2\t1\n"  # line 2 holds a CR that no LF follows


def test_a_lone_cr_in_the_qrels_is_refused_as_the_folder_reader_refuses_it(tmp_path):
    # The expected verdict is the folder reader's (read_beir_qrels on the file's bytes): "2: carriage return
    # inside a line". pandas (datasets' CSV builder) ended a line at the lone CR, so hf: read two judgments
    # (q1 d1 1, q1 d2 1) from a file the folder loader refuses.
    with pytest.raises(InputError, match=r"^X:2: carriage return inside a line"):
        read_beir_qrels(Path("X"), LONE_CR)
    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_bytes(LONE_CR)
    with pytest.raises(InputError, match=r"tiny-qrels:test:2: carriage return inside a line"):
        load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")


def test_crlf_qrels_still_load_as_in_a_folder(tmp_path):
    data = b"query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n\r\nq1\td2\t2\r\n"
    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_bytes(data)
    got = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache").qrels
    want = read_beir_qrels(Path("X"), data)
    columns = [(q.query_ids.tolist(), q.doc_ids.tolist(), q.grades.tolist()) for q in (got, want)]
    assert columns[0] == columns[1] == (["q1", "q1"], ["d1", "d2"], [1.0, 2.0])
