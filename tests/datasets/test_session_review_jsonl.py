"""Fresh-eyes review of the JSON Lines fast parse's per-line checks (harness/datasets/jsonl.py).

A lone carriage return (CR not followed by LF) ends a line for the line scan (text mode with
universal newlines, as BEIR's loader opens the file), while pyarrow.json reads it as blank inside a
value. ``_ObjectBlocks`` counted and checked lines by LF only, so an object broken over a CR
(``{"_id": "a",<CR>"text": "x"}``) passed every check (one row, one LF line, ``{`` first, ``}`` last)
and loaded, while the line scan refuses its first piece; and whether it loaded hung on where the
blocks were cut (a cut at that CR left the next block starting at ``"text"``: refused).

Expected values: the line scan's (``harness.datasets.beir._scan_corpus``, ``json.loads`` per line as
BEIR's ``GenericDataLoader``), the reference grammar.
"""

from __future__ import annotations

import json

import pytest

from harness.datasets import beir, jsonl
from harness.errors import InputError
from tests.datasets.test_scale_review import _fast  # the fast parse's _id column, or None

DOCS = [json.dumps({"_id": f"d{i}", "title": "", "text": f"word {i}"}) for i in range(8)]




@pytest.mark.parametrize("stream", [False, True], ids=["table", "stream"])
@pytest.mark.parametrize("block", [1 << 24, 64])
def test_an_object_broken_over_a_lone_cr_is_refused(tmp_path, monkeypatch, stream, block):
    """Line 2 (by the line scan's count) is ``{"_id": "x",``: malformed; the fast parse read the file."""
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block)
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(f'{DOCS[0]}\n{{"_id": "x",\r"text": "y"}}\n{DOCS[1]}\n'.encode())
    assert _fast(path, stream) is None  # (was: ['d0', 'x', 'd1'])
    with pytest.raises(InputError, match=r"corpus.jsonl:2: malformed JSON"):
        beir._parse_corpus(path)


@pytest.mark.parametrize("stream", [False, True], ids=["table", "stream"])
def test_crlf_split_across_reads_keeps_the_fast_parse(tmp_path, monkeypatch, stream):
    """CRLF line ends, a read ending between the CR and its LF (blocks of 9 to 80 bytes), a BOM, a last
    line without a line end: the fast parse takes the file and reads what the line scan reads."""
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(("\ufeff" + "\r\n".join(DOCS) + "\r\n\r\n" + DOCS[0].replace("d0", "z")).encode())
    want = beir._scan_corpus(path).table.column("_id").to_pylist()
    for block in range(len(DOCS[0]) + 3, 80):
        monkeypatch.setattr(jsonl, "BLOCK_BYTES", block)
        assert _fast(path, stream) in (None, want)  # (a block smaller than a line: pyarrow refuses)
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 1 << 24)
    path.write_bytes(("\ufeff" + "\r\n".join(DOCS) + "\r\n").encode())
    assert _fast(path, stream) == [f"d{i}" for i in range(8)]
