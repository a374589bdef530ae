"""A NUL inside an id cannot be written to a TREC file: trec_eval reads ids as C strings, so "d\\0x" would
be read as "d" (another document, or a query merged with another). The writer refuses it as it refuses
whitespace, for query and document ids, Python strings and a corpus's Arrow ids alike, before writing
anything; one rule (harness.formats.trec.unwritable_ids) decides."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from harness.columns import IdColumn
from harness.formats import native
from harness.formats.trec import read_run, unwritable_ids, write_qrels, write_run
from harness.qrels import Qrels
from harness.run import Run

NUL = "cannot be written to a TREC file (contains NUL: trec_eval would cut the id there)"


@pytest.fixture(params=["compiled", "python"])
def writer(request, monkeypatch):
    if request.param == "compiled" and native._built is None:
        pytest.skip("the compiled run writer is not built (no C compiler)")
    monkeypatch.setenv(native.SWITCH, "1" if request.param == "compiled" else "0")


@pytest.mark.parametrize("doc", ["d\x001", "\x00", "d1\x00"])
def test_a_document_id_holding_nul_is_refused(tmp_path, writer, doc):
    runs = [Run.from_dict({"q1": {doc: 5.0, "x": 1.0}}),
            Run.from_arrays(["q1"], np.array([0, 2]), np.array([1, 0]), np.array([5.0, 1.0]),
                            IdColumn(pa.array(["x", doc, "y"])))]
    for run in runs:
        with pytest.raises(ValueError) as err:
            write_run(run, tmp_path / "run.trec")
        assert str(err.value) == f"document id {doc!r} {NUL}"
        assert not (tmp_path / "run.trec").exists()


def test_a_query_id_holding_nul_is_refused(tmp_path, writer):
    with pytest.raises(ValueError) as err:
        write_run(Run.from_dict({"q\x001": {"a": 1.0}, "q2": {"b": 2.0}}), tmp_path / "run.trec")
    assert str(err.value) == f"query id 'q\\x001' {NUL}"
    with pytest.raises(ValueError, match="run tag 't\\\\x00' cannot be written"):
        write_run(Run.from_dict({"q1": {"a": 1.0}}), tmp_path / "run.trec", tag="t\x00")
    assert not (tmp_path / "run.trec").exists()


def test_qrels_ids_holding_nul_are_refused(tmp_path):
    for rows, what in [([("q\x00", "a", 1.0)], "query id 'q\\x00'"), ([("q", "a\x00", 1.0)], "document id 'a\\x00'")]:
        with pytest.raises(ValueError) as err:
            write_qrels(Qrels.from_rows(rows), tmp_path / "qrels")
        assert str(err.value) == f"{what} {NUL}"
    assert not (tmp_path / "qrels").exists()


def test_a_nul_id_the_run_does_not_retrieve_is_no_error(tmp_path, writer):
    column = IdColumn(pa.array(["x", "bad\x00", "y"]))
    write_run(Run.from_arrays(["q1"], np.array([0, 2]), np.array([0, 2]), np.array([2.0, 1.0]), column),
              tmp_path / "run.trec")
    assert read_run(tmp_path / "run.trec").to_dict() == {"q1": {"x": 2.0, "y": 1.0}}


def test_one_rule_for_every_kind_of_id_column():
    # empty, ASCII whitespace, NUL; a leading '#' in the first column; U+00A0 and '#' elsewhere are data
    values = ["ok", "", "a b", "a\x0bb", "n\x00", "#c", "c#", "d\u00a0e", "\x00"]
    expected_first, expected_other = [1, 2, 3, 4, 5, 8], [1, 2, 3, 4, 8]
    arrow = pa.array(["pad"] + values).slice(1)
    chunked = pa.chunked_array([pa.array(values[:4]), pa.array(values[4:])])
    for ids in (values, np.array(values, dtype=object), arrow, chunked, IdColumn(arrow)):
        assert unwritable_ids(ids, first_column=True).tolist() == expected_first, type(ids)
        assert unwritable_ids(ids).tolist() == expected_other, type(ids)


@pytest.mark.parametrize("where", ["document", "query"])
def test_an_id_holding_a_lone_surrogate_is_refused_with_one_line(tmp_path, writer, where):
    """A str id holding a lone surrogate (JSON's "\\ud800" from a service or plugin) is no Unicode text:
    writing it failed midway with a bare UnicodeEncodeError naming neither the id nor the file (found by
    the second live-services review). Expected: the writer's one-line refusal, naming the id, and no
    file."""
    bad = "a\ud800"
    run = Run.from_dict({"q1": {bad: 5.0, "x": 1.0}} if where == "document" else {bad: {"x": 1.0}})
    with pytest.raises(ValueError) as err:
        write_run(run, tmp_path / "run.trec")
    assert str(err.value) == (f"{where} id {bad!r} cannot be written to a TREC file (holds a lone surrogate: "
                              "not valid Unicode text, which a UTF-8 file cannot hold)")
    assert list(tmp_path.iterdir()) == []
    assert unwritable_ids([bad, "ok"]).tolist() == [0]
