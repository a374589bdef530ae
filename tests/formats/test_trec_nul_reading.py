"""A NUL byte in a TREC run or qrels file is refused, naming the line (second formats review).

Source: the trec_eval binaries built from usnistgov/trec_eval (9.0.7 and 10.0-rc3) read a run or qrels
file as C text: a NUL inside a line makes both crash (9.x: segmentation fault, 10.x: "malloc(): invalid
size", their line count stops at the NUL), and a NUL that starts a line ends the file for them (the
lines after it are silently dropped). The harness read such a NUL as part of an id (``d\\0x``, which
trec_eval would read as ``d``; the writer refuses such ids for that reason), so the same file gave a
number trec_eval cannot give. Every reader now refuses it: the compiled one and pyarrow's leave the
file to the line reader, which names the line and column.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.errors import InputError
from harness.formats import native
from harness.formats.trec import read_qrels, read_run


@pytest.fixture(params=["compiled", "columnar"])
def reader(request, monkeypatch):
    if request.param == "compiled" and native._built is None:
        pytest.skip("the compiled run reader is not built (no C compiler)")
    monkeypatch.setenv(native.SWITCH, "1" if request.param == "compiled" else "0")


@pytest.mark.parametrize("data, where", [
    (b"q Q0 d\x00x 1 5 t\nq Q0 e 2 4 t\n", ":1: NUL byte at column 7"),      # in a document id
    (b"q\x00x Q0 d 1 5 t\nq2 Q0 e 2 4 t\n", ":1: NUL byte at column 2"),     # in a query id
    (b"q Q0 d 1 5 t\x00\nq Q0 e 2 4 t\n", ":1: NUL byte at column 13"),      # in the (ignored) tag
    (b"q Q0 e 1 5 t\n\x00q Q0 d 2 4 t\n", ":2: NUL byte at column 1"),       # trec_eval stops reading here
    (b"q Q0 e 1 5 t\n\x00\x00\x00\x00\n", ":2: NUL byte at column 1"),       # a block of zeros (damaged write)
    (b"# h\xc3\xa9\x00\nq Q0 e 1 5 t\n", ":1: NUL byte at column 5"),        # in a comment; column in characters
])
def test_a_nul_in_a_run_is_refused_with_its_line(tmp_path, reader, data, where):
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value).startswith(f"{path}{where}: not text")


def test_a_nul_in_trec_qrels_is_refused_with_its_line(tmp_path):
    path = tmp_path / "qrels"
    path.write_bytes(b"q 0 a 1\nq 0 b\x00x 1\n")  # trec_eval would read the document 'b' (or crash)
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert str(err.value).startswith(f"{path}:2: NUL byte at column 6: not text")


def test_harness_evaluate_refuses_it_on_one_line(tmp_path):
    (tmp_path / "qrels").write_bytes(b"q 0 d 1\n")
    (tmp_path / "run").write_bytes(b"q Q0 d\x00x 1 5 t\n")
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", "--qrels", str(tmp_path / "qrels"),
                           "--run", str(tmp_path / "run"), "--k", "1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'run'}:1: NUL byte at column 7: not text (trec_eval stops reading at a NUL; "
        "a damaged file?)"]
