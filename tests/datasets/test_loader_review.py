"""Defects found by a review of the loaders and caches (differential tests against a plain reader:
``json.loads`` per line, the qrels grammar of docs/evaluation.md), each stated with its expected value."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from harness.datasets import corpus_cache
from harness.datasets import download as dl
from harness.datasets import registry
from harness.datasets.beir import load_corpus, load_qrels_tsv, load_queries
from harness.datasets.corpus import COLUMNS
from harness.errors import HarnessError, InputError
from tests.datasets.http_fixture import FlakyServer


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(dl.MIRROR_ENV, raising=False)
    monkeypatch.delenv(dl.OFFLINE_ENV, raising=False)
    return tmp_path / "cache"


# --------------------------------------------------------------------------- JSONL
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("cached", [False, True])
def test_lone_surrogate_escape_is_a_line_error(tmp_path, gz, cached):
    # "\udc00" is legal JSON (json.loads gives a lone surrogate) but no UTF-8 text: it crashed the corpus
    # (UnicodeEncodeError, no file or line) and was kept in a query, to crash the run file's writer later.
    data = b'{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y\\udc00"}\n'
    path = tmp_path / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    expected = f"{path}:2: 'text' holds a lone surrogate escape (\\ud800-\\udfff): not valid Unicode text (id 'b')"
    with pytest.raises(InputError) as err:
        load_corpus(path, cache=cached)
    assert str(err.value) == expected
    with pytest.raises(InputError) as err:
        load_queries(path)
    assert str(err.value) == expected


def test_surrogate_pairs_and_nul_load_as_json_loads_reads_them(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "a\\u0000", "title": "\\ud83d\\ude00", "text": "x\\u0000y"}\n{"_id": "a", "text": ""}')
    corpus = load_corpus(path)
    assert (corpus.ids, list(corpus.titles), list(corpus.texts)) == (["a\x00", "a"], ["\U0001F600", ""], ["x\x00y", ""])


@pytest.mark.parametrize("gz", [False, True])
def test_invalid_utf8_names_its_line(tmp_path, gz):
    # docs/datasets.md: the line scan reports "unreadable bytes" as FILE:LINE; it said only "cannot read
    # file: ... in position N" (N counted within an 8 KiB decoding chunk, not the file)
    data = b"".join(b'{"_id": "d%d", "text": "%s"}\n' % (i, b"x" * 500) for i in range(40))
    data += b'{"_id": "bad", "text": "caf\xe9"}\n'
    path = tmp_path / ("queries.jsonl.gz" if gz else "queries.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    expected = f"{path}:41: not valid UTF-8 (byte 0xe9 at column 28)"
    with pytest.raises(InputError) as err:
        load_queries(path)
    assert str(err.value) == expected
    with pytest.raises(InputError) as err:
        load_corpus(path)
    assert str(err.value) == expected


def test_non_string_values_convert_with_str(tmp_path):
    # docs/datasets.md: legal non-string values are converted with str(); 0 and false became "" ("0" or
    # "" was decided by truthiness), unlike 3.5 -> "3.5"; the reference is str(json.loads(line)[key])
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "title": false, "text": 0}\n{"_id": "b", "title": null, "text": 0.0}\n')
    corpus = load_corpus(path)
    assert (list(corpus.titles), list(corpus.texts)) == (["False", ""], ["0", "0.0"])
    assert load_queries(path).texts == ["0", "0.0"]


# --------------------------------------------------------------------------- qrels TSV
def _qrels(tmp_path, data: bytes):
    path = tmp_path / "test.tsv"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("score", ["1_0", "\uff11", "nan", "NaN", "0x1", "1,5"])
def test_qrels_score_outside_the_number_grammar_is_refused(tmp_path, score):
    # docs/evaluation.md refuses these grades in TREC qrels (Python's float reads "1_0" as 10, C's atof
    # as 1; "１" is a full-width digit); the BEIR TSV reader took "1_0" as grade 10 and NaN as a grade
    path = _qrels(tmp_path, f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{score}\n".encode())
    with pytest.raises(InputError) as err:
        load_qrels_tsv(path)
    assert str(err.value).startswith(f"{path}:3: grade ") and str(err.value).endswith("(id 'q1')")


@pytest.mark.parametrize("score", ["inf", "-Infinity", "1e400"])
def test_infinite_qrels_scores_are_refused_in_a_beir_folder_too(tmp_path, score):
    # The TREC readers refuse infinite grades (formats/trec.py: an infinite gain makes nDCG inf / inf =
    # NaN); the BEIR folder's reader took them, and `harness run` printed NaN for every nDCG.
    path = _qrels(tmp_path, f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{score}\n".encode())
    with pytest.raises(InputError, match="is not finite") as err:
        load_qrels_tsv(path)
    assert str(err.value) == f"{path}:3: grade {score!r} for document 'd2' is not finite (id 'q1')"


def test_qrels_grades_kept_as_written(tmp_path):
    # grade 0 and negative grades are judgments too (BEIR keeps every row; README: float relevance)
    path = _qrels(tmp_path, b"query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td1\t-1\nq2\td3\t1.5\nq3\td1\t+1e0\n")
    qrels = load_qrels_tsv(path)
    assert qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": -1, "d3": 1.5}, "q3": {"d1": 1}}


def test_qrels_first_row_with_a_bad_score_is_not_taken_for_a_header(tmp_path):
    # without a header, a first row whose score is mistyped was skipped as the header: one judgment lost
    path = _qrels(tmp_path, b"q1\td1\t1_0\nq1\td2\t1\n")
    with pytest.raises(InputError, match=r":1: grade '1_0' for document 'd1' is not a number \(id 'q1'\)"):
        load_qrels_tsv(path)


def test_qrels_byte_order_mark_and_leading_blank_line(tmp_path):
    # a BOM belongs to no query id (it was read as '\ufeffq1', a query without text that scored 0)
    qrels = load_qrels_tsv(_qrels(tmp_path, b"\xef\xbb\xbfq1\td1\t1\n"))
    assert qrels.query_ids.tolist() == ["q1"]
    # the header is the first non-blank line (it was only line 1)
    qrels = load_qrels_tsv(_qrels(tmp_path, b"\r\nquery-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n"))
    assert qrels.to_dict() == {"q1": {"d1": 1}}


def test_qrels_invalid_utf8_names_its_line(tmp_path):
    # was a bare UnicodeDecodeError (the CLI printed "error: 'utf-8' codec can't decode ...": no file)
    path = _qrels(tmp_path, b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq\xff\td1\t1\n")
    with pytest.raises(InputError) as err:
        load_qrels_tsv(path)
    assert str(err.value) == f"{path}:3: not valid UTF-8 (byte 0xff at column 2)"


# --------------------------------------------------------------------------- corpus cache
def test_cache_file_with_a_damaged_offset_is_rebuilt(tmp_path, cache):
    # A flipped bit in a string offset passes Arrow's cheap validate() (first and last offsets only);
    # reading that string then ran outside the file's map (SIGSEGV, or a wrong/undecodable string).
    path = tmp_path / "corpus.jsonl"
    docs = [{"_id": f"d{i}", "title": "", "text": f"text {i}"} for i in range(100)]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    load_corpus(path, cache=True)
    corpus_cache.wait()
    digest = corpus_cache.source_checksum(path)
    target = corpus_cache.cache_path(digest)
    table, mapping = corpus_cache.open_cached(target, digest, COLUMNS)
    import pyarrow as pa

    chunk = table.column("text").chunks[0]
    where = chunk.buffers()[1].address - pa.py_buffer(mapping).address + 4 * (chunk.offset + 50)  # 50th offset
    del table, chunk
    mapping.close()
    data = bytearray(target.read_bytes())
    data[where + 3] ^= 0x40  # offset += 2**30
    target.write_bytes(bytes(data))
    assert corpus_cache.open_cached(target, digest, COLUMNS) is None
    corpus = load_corpus(path, cache=True)  # rebuilt from the source
    assert list(corpus.texts) == [d["text"] for d in docs]
    corpus_cache.wait()
    assert corpus_cache.open_cached(target, digest, COLUMNS) is not None


# --------------------------------------------------------------------------- downloads
def _zip(entries: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    return buffer.getvalue()


TINY = _zip({"nfcorpus/corpus.jsonl": '{"_id": "d1", "text": "x"}\n', "nfcorpus/queries.jsonl": '{"_id": "q1", "text": "x"}\n',
             "nfcorpus/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n"})


@pytest.fixture
def tiny_registry(monkeypatch):
    real = registry._load()
    patched = dict(real, nfcorpus=dataclasses.replace(real["nfcorpus"], md5=hashlib.md5(TINY).hexdigest()))
    monkeypatch.setattr(registry, "_load", lambda: patched)


def test_offline_refuses_a_wrong_zip_without_touching_the_network(cache, tiny_registry, monkeypatch):
    # HARNESS_OFFLINE=1: "never touch the network"; a placed zip with another checksum was re-downloaded
    monkeypatch.setenv(dl.OFFLINE_ENV, "1")
    placed = cache / "datasets" / ".downloads" / "nfcorpus.zip"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(TINY[:-1])
    with FlakyServer({"nfcorpus.zip": TINY}) as server:
        with pytest.raises(HarnessError, match=f"offline .*{hashlib.md5(TINY[:-1]).hexdigest()}"):
            dl.download("nfcorpus", mirror=server.base + "/ok", retries=0, backoff=0)
        assert server.log == []
    placed.write_bytes(TINY)
    assert (dl.download("nfcorpus") / "corpus.jsonl").is_file()


def test_stale_part_longer_than_the_file_starts_over_in_the_same_attempt(cache, tiny_registry):
    # HTTP 416 for the resume offset: the part is dropped and the file fetched whole; with retries=0 this
    # failed ("starting over", then no attempt left)
    part = cache / "datasets" / ".downloads" / "nfcorpus.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"x" * (len(TINY) + 10))
    with FlakyServer({"nfcorpus.zip": TINY}) as server:
        folder = dl.download("nfcorpus", mirror=server.base + "/ok", retries=0, backoff=0)
        assert [entry[2] for entry in server.log] == [f"bytes={len(TINY) + 10}-", None]
    assert (folder / "corpus.jsonl").is_file() and not part.exists()


def test_forced_unpack_killed_midway_leaves_the_old_folder_whole(tmp_path, monkeypatch):
    # --force over a downloaded dataset deleted the folder in place: killed midway, the folder kept its
    # DOWNLOAD.json without its corpus, so is_downloaded() said yes and nothing repaired it
    zip_path = tmp_path / "nfcorpus.zip"
    zip_path.write_bytes(TINY)
    target = tmp_path / "datasets" / "nfcorpus"
    dl.unpack(zip_path, target, {"md5": "old"})
    real = shutil.rmtree

    def killed(path, *args, **kwargs):  # the first removal dies after deleting the corpus file
        monkeypatch.setattr(dl.shutil, "rmtree", real)
        for found in Path(path).rglob("corpus.jsonl"):
            found.unlink()
        raise KeyboardInterrupt

    monkeypatch.setattr(dl.shutil, "rmtree", killed)
    with pytest.raises(KeyboardInterrupt):
        dl.unpack(zip_path, target, {"md5": "new"})
    assert (target / "corpus.jsonl").is_file()  # the old or the new folder, whole
    assert dl.unpack(zip_path, target, {"md5": "new"}) == target
    assert json.loads((target / "DOWNLOAD.json").read_text())["md5"] == "new"
    assert [p.name for p in target.parent.iterdir()] == ["nfcorpus"]  # nothing stray left


# --------------------------------------------------------------------------- Hugging Face layout
README = """---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: corpus/*.parquet
- config_name: queries
  data_files:
  - split: queries
    path: queries/*.parquet
---
"""


@pytest.mark.parametrize("case", ["duplicate document", "duplicate query", "null document"])
def test_hf_refuses_repeated_or_missing_ids(tmp_path, case):
    # as the folder loader does: a repeated document was indexed twice, a repeated query kept its last
    # text only, a null id became ""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("datasets")
    from harness.datasets.hf import load_hf_dataset

    doc_ids = {"duplicate document": ["d1", "d1"], "null document": ["d1", None]}.get(case, ["d1", "d2"])
    query_ids = ["q1", "q1"] if case == "duplicate query" else ["q1", "q2"]
    repo = tmp_path / "BeIR" / "tiny"
    for part, table in (("corpus", pa.table({"_id": doc_ids, "title": ["", ""], "text": ["x", "y"]})),
                        ("queries", pa.table({"_id": query_ids, "text": ["a", "b"]}))):
        (repo / part).mkdir(parents=True)
        pq.write_table(table, repo / part / f"{part}.parquet")
    (repo / "README.md").write_text(README)
    (tmp_path / "BeIR" / "tiny-qrels").mkdir()
    (tmp_path / "BeIR" / "tiny-qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    expected = {"duplicate document": ":corpus: duplicate document id 'd1'",
                "duplicate query": ":queries: duplicate query id 'q1'",
                "null document": ":corpus: row 2 has no document id"}[case]
    with pytest.raises(HarnessError) as err:
        load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert str(err.value) == f"{repo}{expected}"


@pytest.mark.parametrize("gz", [False, True])
def test_byte_order_mark_is_skipped_by_the_line_scan_too(tmp_path, gz):
    # pyarrow.json skips a BOM (docs/datasets.md); the line scan (numeric ids send a file there) refused it:
    # "malformed JSON: Unexpected UTF-8 BOM", so the same BOM loaded or failed depending on the ids
    data = b'\xef\xbb\xbf{"_id": 1, "text": "x"}\n{"_id": "2", "text": "y"}\n'
    path = tmp_path / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert load_corpus(path).ids == ["1", "2"]
    assert load_queries(path).ids == ["1", "2"]


def test_a_judged_id_with_a_lone_surrogate_counts_as_missing():
    """Qrels built through the API may hold an id that is no UTF-8 text ("d\\ud800"): no corpus (Arrow,
    UTF-8) holds it, so it is one judgment pointing nowhere; the count used to raise UnicodeEncodeError."""
    from harness.datasets.beir import _count_missing
    from harness.datasets.corpus import Corpus

    corpus = Corpus(["d1", "d3"], ["", ""], ["a", "b"])
    assert _count_missing(["d1", "d\ud800", "d9", "d1", "d\ud800"], corpus) == 3
