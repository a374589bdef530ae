"""JSON Lines means one object per line: the fast column parse (pyarrow.json) read a file of objects
printed over several lines, or two objects on one line, as rows, where the line scan refuses the line
(as BEIR's GenericDataLoader does: ``json.loads`` on each line). Which one decided depended on the file's
size: a pretty-printed corpus under one 16 MiB block loaded, a larger one failed at line 1. Now both
paths refuse it alike (the line scan names the line); blank lines between objects still load (through
the line scan, as before) and trailing blank lines keep the fast path."""

from __future__ import annotations

import gzip
import json

import pytest

from harness.datasets import beir, jsonl
from harness.errors import InputError

DOCS = [{"_id": f"d{i}", "title": "", "text": f"word {i}"} for i in range(3)]


def write(path, text: str):
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    return path


@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz"])
@pytest.mark.parametrize("stream", [False, True], ids=["table", "stream"])
def test_a_pretty_printed_corpus_is_refused_at_its_first_line(tmp_path, name, stream):
    path = write(tmp_path / name, "".join(json.dumps(d, indent=2) + "\n" for d in DOCS))
    if stream:
        assert jsonl.stream_string_columns(path, beir.COLUMNS, lambda batch: None) is False
    else:
        assert jsonl.read_string_columns(path, beir.COLUMNS) is None  # (was: a table of 3 rows)
    # the line scan's line, as json.loads gives it for line 1 ("{")
    with pytest.raises(InputError, match=r"corpus.jsonl(.gz)?:1: malformed JSON: Expecting property name enclosed "
                                         r"in double quotes at column 2"):
        beir._parse_corpus(path)


def test_two_objects_on_one_line_are_refused_naming_the_line(tmp_path):
    path = write(tmp_path / "corpus.jsonl", json.dumps(DOCS[0]) + "\n" + json.dumps(DOCS[1]) + " "
                 + json.dumps(DOCS[2]) + "\n")
    assert jsonl.read_string_columns(path, beir.COLUMNS) is None  # (was: 3 rows)
    with pytest.raises(InputError, match=r"corpus.jsonl:2: malformed JSON: Extra data at column 46"):
        beir._parse_corpus(path)


@pytest.mark.parametrize("text, fast", [
    ("{a}\n{b}\n{c}\n", True),
    ("{a}\n{b}\n{c}", True),  # no line end after the last
    ("{a}\r\n{b}\r\n{c}\r\n\r\n  \n\n", True),  # trailing blank lines
    ("\n{a}\n{b}\n{c}\n", False),  # a blank line first: the line scan reads it
    ("{a}\n\n{b}\n \t\n{c}\n", False),  # blank lines between: the line scan reads them
    ("{a}\r{b}\r{c}\r", False),  # CR line ends: the line scan reads them
])
def test_one_object_per_line_loads_with_blank_lines_as_before(tmp_path, text, fast):
    a, b, c = (json.dumps(d) for d in DOCS)
    path = write(tmp_path / "corpus.jsonl", text.replace("{a}", a).replace("{b}", b).replace("{c}", c))
    table = jsonl.read_string_columns(path, beir.COLUMNS)
    assert (table is not None) is fast
    if fast:
        assert table.column("_id").to_pylist() == ["d0", "d1", "d2"]
    assert beir._parse_corpus(path).column("_id").to_pylist() == ["d0", "d1", "d2"]
    assert beir._parse_corpus(path).column("text").to_pylist() == ["word 0", "word 1", "word 2"]
