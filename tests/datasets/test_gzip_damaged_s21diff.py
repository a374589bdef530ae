"""A damaged ``.gz`` (truncated, trailing garbage, a CRC error) is bad input: one line naming the file, as the
parser says it (``<file>: cannot read file: ...``), also now that its content is hashed (a ``.gz``'s decompressed
bytes: harness.checksums.content_sha256, docs/datasets.md "One text, any encoding").

Before, the content checksum's EOFError / BadGzipFile came out bare: ``harness run`` on a cached-size corpus
printed ``Aborted.`` (click's EOFError; the corpus cache's hashing thread re-raised it over the parser's line)
or ``error: CRC check failed ...`` with no file, and a bench cell failed with ``EOFError: Compressed file ended
...`` (its plan hashes the content of any size)."""

from __future__ import annotations

import gzip
import json

import pytest

from harness.errors import InputError

LINES = "".join(json.dumps({"_id": f"d{i}", "title": "t", "text": f"text number {i} " * 20}) + "\n"
                for i in range(200)).encode()


# a gzip header, then a deflate block of the reserved type 3: isal's igzip raises its IsalError ("Invalid deflate
# block found"), Python's gzip zlib.error ("invalid block type"), neither an OSError
BAD_DEFLATE = bytes.fromhex("1f8b0800000000000003") + b"\x07" + b"\0" * 16


def _damaged(kind: str) -> bytes:
    if kind == "deflate":
        return BAD_DEFLATE
    whole = gzip.compress(LINES, mtime=0)
    if kind == "truncated":
        return whole[:-40]
    if kind == "garbage":  # trailing bytes that are no gzip member
        return whole + b"hello"
    return whole[:-8] + bytes([whole[-8] ^ 1]) + whole[-7:]  # "crc": the trailer's CRC-32 off by one bit


@pytest.fixture
def folder(tmp_path, monkeypatch, request):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ds"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl.gz").write_bytes(_damaged(request.param))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "text"}) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    return root


KINDS = ["truncated", "garbage", "crc", "deflate"]


@pytest.mark.parametrize("folder", KINDS, indirect=True)
def test_content_checksum_of_a_damaged_gz_is_one_line_naming_the_file(folder):
    from harness.bench.cells import file_sha256
    from harness.checksums import content_sha256

    path = folder / "corpus.jsonl.gz"
    for digest in (lambda: content_sha256(path), lambda: file_sha256(path, {}, content=True)):  # (bench's plan)
        with pytest.raises(InputError) as raised:
            digest()
        assert str(raised.value).startswith(f"{path}: cannot read file: ")


@pytest.mark.parametrize("folder", KINDS, indirect=True)
def test_run_on_a_damaged_gz_corpus_of_cached_size_names_the_file(folder, monkeypatch, capsys):
    import sys

    from harness.cli import main
    from harness.datasets import corpus_cache

    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)  # (as a corpus of 32 MiB: hashed on a thread while parsed)
    monkeypatch.setattr(sys, "argv", ["harness", "run", "-q", "-d", str(folder), "-o", str(folder.parent / "out")])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 2, err  # (before: 1 and "Aborted." for a truncated file)
    assert err.startswith(f"error: {folder / 'corpus.jsonl.gz'}: cannot read file: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("cached", [False, True], ids=["small", "cached-size"])
@pytest.mark.parametrize("name", ["corpus.jsonl.gz", "queries.jsonl.gz"])
def test_a_corrupt_deflate_stream_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys, name, cached):
    """(Before, also before content checksums: the parser caught OSError and EOFError only, and isal's error
    reached the user as a traceback: ``IsalError: Error -1 Invalid deflate block found``.)"""
    import sys

    from harness.cli import main
    from harness.datasets import corpus_cache

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    if cached:
        monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)
    root = tmp_path / "ds"
    (root / "qrels").mkdir(parents=True)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    good = {"corpus.jsonl.gz": gzip.compress(LINES, mtime=0),
            "queries.jsonl.gz": gzip.compress(json.dumps({"_id": "q1", "text": "text"}).encode() + b"\n", mtime=0)}
    for file, data in good.items():
        (root / file).write_bytes(BAD_DEFLATE if file == name else data)
    monkeypatch.setattr(sys, "argv", ["harness", "run", "-q", "-d", str(root), "-o", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 2, err
    assert err.startswith(f"error: {root / name}: cannot read file: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("folder", ["garbage", "truncated"], indirect=True)
def test_text_appended_to_a_gz_is_not_called_a_truncated_file(folder, monkeypatch, capsys):
    """igzip says "Compressed file ended before the end-of-stream marker was reached" of both: of text appended
    to whole gzip data too, whose data is not short. That one is now said for what it is (Python's gzip tells the
    two apart, read again on this path only); a truncated file keeps igzip's words."""
    import sys

    from harness.checksums import content_sha256
    from harness.cli import main
    from harness.datasets import corpus_cache

    path = folder / "corpus.jsonl.gz"
    expected = (f"{path}: cannot read file: the gzip data is followed by bytes that are not gzip data (Not a gzipped "
                "file (b'he'))" if path.read_bytes().endswith(b"hello") else
                f"{path}: cannot read file: Compressed file ended before the end-of-stream marker was reached")
    with pytest.raises(InputError) as raised:
        content_sha256(path)
    assert str(raised.value) == expected
    for size in (1, 2**40):  # parsed while hashed on a thread (a corpus of cached size), and parsed alone
        monkeypatch.setattr(corpus_cache, "MIN_BYTES", size)
        monkeypatch.setattr(sys, "argv", ["harness", "run", "-q", "-d", str(folder), "-o", str(folder.parent / "out")])
        with pytest.raises(SystemExit):
            main()
        assert capsys.readouterr().err == f"error: {expected}\n"
