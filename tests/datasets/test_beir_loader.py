"""BEIR folder loading: real data counts and checksums, and one-line errors for bad files."""

from __future__ import annotations

import gzip
import json

import pytest

from harness.datasets import load_dataset
from harness.datasets.beir import load_beir_folder
from harness.errors import HarnessError, InputError


def test_bundled_scifact_matches_its_provenance():
    ds = load_dataset("scifact")
    # Counts and sha256 from harness/datasets/bundled/scifact/PROVENANCE.md.
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (5183, 300, 339)
    assert ds.files["qrels/test.tsv"] == "0864bb985e0ca2367ba217977e72004d549054b2b06666ed9d4825ac7c21284c"
    assert ds.files["corpus.jsonl.gz"] == "e32dde985ff2a6c9e9b79fc2ada995a7f3759523e9cd563e4a636a88de5524a0"
    assert ds.warnings == []


def test_nfcorpus_graded_qrels(nfcorpus_dir):
    ds = load_beir_folder(nfcorpus_dir)
    # PROVENANCE.md: 3,633 docs, 323 test queries, 12,334 judgments (11,758 grade 1, 576 grade 2).
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (3633, 323, 12334)
    assert (ds.qrels.grades == 2).sum() == 576


def write_folder(tmp_path, corpus_lines, qrels_text="query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n",
                 queries=({"_id": "q1", "text": "hello"},)):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text("\n".join(corpus_lines) + "\n")
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (tmp_path / "qrels" / "test.tsv").write_text(qrels_text)
    return tmp_path


def test_crlf_qrels_and_plain_files_load(tmp_path):
    ds = load_beir_folder(write_folder(tmp_path, ['{"_id": "d1", "title": "t", "text": "x"}']))
    assert ds.qrels.to_dict() == {"q1": {"d1": 1}}
    assert ds.corpus.contents() == ["t x"]


def test_malformed_json_names_file_and_line(tmp_path):
    folder = write_folder(tmp_path, ['{"_id": "d1", "text": "x"}', '{"_id": "d2", "text": '])
    with pytest.raises(InputError, match=r"corpus.jsonl:2: malformed JSON"):
        load_beir_folder(folder)


def test_duplicate_document_id_names_line_and_id(tmp_path):
    folder = write_folder(tmp_path, ['{"_id": "d1", "text": "x"}', '{"_id": "d1", "text": "y"}'])
    with pytest.raises(InputError, match=r"corpus.jsonl:2: duplicate document id \(first on line 1\) \(id 'd1'\)"):
        load_beir_folder(folder)


def test_empty_corpus_is_an_error(tmp_path):
    with pytest.raises(InputError, match="the corpus is empty"):
        load_beir_folder(write_folder(tmp_path, []))


def test_bad_score_in_qrels_names_line(tmp_path):
    folder = write_folder(tmp_path, ['{"_id": "d1", "text": "x"}'], "query-id\tcorpus-id\tscore\nq1\td1\tx\n")
    with pytest.raises(InputError, match=r"test.tsv:2: grade 'x' for document 'd1' is not a number \(id 'q1'\)"):
        load_beir_folder(folder)


def test_judgments_pointing_nowhere_are_counted_as_warnings(tmp_path):
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tmissing\t1\nq9\td1\t1\n"
    ds = load_beir_folder(write_folder(tmp_path, ['{"_id": "d1", "text": "x"}'], qrels))
    assert ds.warnings == ["1 judged query id(s) have no query text; they score 0",
                           "1 judgment(s) name documents missing from the corpus"]


def test_gzipped_files_are_read(tmp_path):
    folder = write_folder(tmp_path, ['{"_id": "d1", "text": "x"}'])
    with gzip.open(folder / "corpus.jsonl.gz", "wt") as handle:
        handle.write('{"_id": "g1", "text": "gz"}\n')
    (folder / "corpus.jsonl").unlink()
    assert load_beir_folder(folder).corpus.ids == ["g1"]


def test_unknown_split_and_dataset():
    with pytest.raises(InputError, match="no qrels for split 'dev'"):
        load_dataset("scifact", split="dev")
    with pytest.raises(HarnessError, match="unknown dataset 'nope'"):
        load_dataset("nope")


def test_a_gzipped_qrels_tsv_without_gz_in_its_name_is_one_line_naming_it(tmp_path, harness_cli):
    """A folder's qrels/test.tsv holding gzip data (a `.tsv.gz` renamed): `harness run -d FOLDER` said
    "FOLDER/qrels/test.tsv:1: not valid UTF-8 (byte 0x8b at column 2)" (with a BEIR header) or "carriage
    return inside a line", neither saying it is compressed; a folder's qrels are read only as plain
    qrels/<split>.tsv (docs/datasets.md), so the line says to decompress it. Expected: that one line, exit 2."""
    (tmp_path / "ds").mkdir()
    folder = write_folder(tmp_path / "ds", [json.dumps({"_id": "d1", "text": "hello"})])
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_bytes(gzip.compress(qrels.read_bytes(), mtime=0))
    expected = (f"{qrels}:1: gzip-compressed data, not text: a dataset's qrels/<split>.tsv is read as plain "
                "text; decompress it")
    with pytest.raises(InputError) as caught:
        load_dataset(str(folder))
    assert str(caught.value) == expected
    done = harness_cli("run", "-d", folder, "-r", "bm25", "--k", "1", "-o", tmp_path / "out")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [f"error: {expected}"]


def test_a_queries_file_without_a_judged_query_is_refused(tmp_path):
    """An empty queries.jsonl, or one of another dataset, was loaded with the warning "300 judged query id(s)
    have no query text; they score 0": every metric 0 and exit 0, where an empty corpus was refused. Now one
    line naming the queries file; some judged queries without a text stay a warning (above)."""
    from harness.datasets.beir import load_beir_folder
    from harness.errors import InputError

    folder = tmp_path / "d"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_beir_folder(folder)
    assert str(caught.value) == f"{folder / 'queries.jsonl'}: the queries file holds no query"
    (folder / "queries.jsonl").write_text('{"_id": "x1", "text": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_beir_folder(folder)
    assert str(caught.value) == (f"{folder / 'queries.jsonl'}: none of the 2 queries judged in qrels/test.tsv is in "
                                 "this file (the first judged: 'q1'): are the queries of another dataset?")
    (folder / "queries.jsonl").write_text('{"_id": "q2", "text": "b"}\n', encoding="utf-8")
    assert load_beir_folder(folder).warnings == ["1 judged query id(s) have no query text; they score 0"]
