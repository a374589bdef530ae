"""gzip data read where the file name does not say .gz (a pipe: --run <(cat run.gz)), session review.

The readers decompress by the name (``.gz``); gzip's header holds NUL bytes (flags, mtime), so the NUL
refusal of commit d0dc035 named a "NUL byte at column 4 ... a damaged file?": a misleading line for a
compressed file given through a pipe or renamed. Expected: one line saying it is gzip data.
"""

from __future__ import annotations

import gzip

import pytest

from harness.errors import InputError
from harness.formats.trec import read_qrels, read_run


@pytest.mark.parametrize("read, text", [
    (read_run, b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"),
    (read_qrels, b"q1 0 d1 1\n"),
])
def test_gzip_data_without_the_gz_name_is_named_as_gzip(tmp_path, read, text):
    path = tmp_path / "input.trec"  # (as /dev/fd/63 is: no .gz suffix)
    path.write_bytes(gzip.compress(text, mtime=0))
    with pytest.raises(InputError, match=r"input\.trec:1: gzip-compressed data, not text: only a file named "
                                         r"\.gz is decompressed"):
        read(path)
    assert read(path.rename(tmp_path / "input.trec.gz")) is not None  # named .gz, the same bytes are read


@pytest.mark.parametrize("text", [b"query-id\tcorpus-id\tscore\nq1\td1\t1\n", b"q1\td1\t1\n"])
def test_gzip_beir_qrels_without_the_gz_name_is_named_as_gzip(tmp_path, text):
    """BEIR tsv qrels (header or none) gzipped under a plain name: `harness evaluate --qrels q.tsv` said
    "q.tsv:1: carriage return inside a line (a lone CR; ...)", about a file holding no text line at all
    (the gzip check ran only in the TREC readers' NUL refusal)."""
    from harness.formats.trec import read_beir_qrels

    path = tmp_path / "q.tsv"
    for mtime in range(64):  # find a member that has a lone CR (what the line reader met first)
        data = gzip.compress(text, mtime=mtime)
        if b"\r" in data.replace(b"\r\n", b""):
            break
    path.write_bytes(data)
    for read in (read_qrels, read_beir_qrels):
        with pytest.raises(InputError, match=r"q\.tsv:1: gzip-compressed data, not text: only a file named "
                                             r"\.gz is decompressed"):
            read(path)
    assert read_qrels(path.rename(tmp_path / "q.tsv.gz")).to_dict() == {"q1": {"d1": 1.0}}

