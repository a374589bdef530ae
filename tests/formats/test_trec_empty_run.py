"""A run in which no query retrieved anything reads back as the harness wrote it (issue: an empty run
did not round-trip).

What the references do (checked on the binaries: trec_eval 9.0.8 and 10.0-rc3, ``-c -m all_trec`` and
``-q``): a file without a single byte is refused by both ("Cannot read results file", exit 2); a file of
only blank lines: 9 stops with "No queries with both results and relevance info", 10 ``-c`` scores every
judged query 0; a file of only ``#`` lines: 9 stops ("Malformed line 1": it knows no comments), 10 ``-c``
scores every judged query 0. pytrec_eval given a judged query with no document scores it 0, ir_measures
scores every judged query 0 for an empty run. So the writer never writes an empty file (a ``#`` line, or
the header), the reader takes a file of blank and ``#`` lines as a run retrieving nothing, which the
evaluator scores 0 for every judged query (trec_eval -c), and a file without a byte stays refused.
"""

from __future__ import annotations

import gzip

import pytest

from harness.errors import InputError
from harness.evaluation import Evaluator
from harness.formats import native
from harness.formats.columnar import read_run_columns
from harness.formats.trec import EMPTY_RUN_LINE, read_run, read_run_lines, write_run
from harness.qrels import Qrels
from harness.run import Run

NOTHING = Run.from_dict({"q1": {}, "q2": {}})  # two queries, no document retrieved
REFUSAL = ": the run file is empty, which trec_eval refuses too (a run that retrieved nothing is written as a '#' comment line)"


@pytest.fixture(params=["compiled", "python"])
def reader(request, monkeypatch):
    if request.param == "compiled" and not native.available():
        pytest.skip("the compiled reader is not built")
    monkeypatch.setenv(native.SWITCH, "1" if request.param == "compiled" else "0")
    return request.param


def _is_empty(run: Run) -> bool:
    return run.n_queries == 0 and len(run) == 0 and run.offsets.tolist() == [0]


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz"])
def test_a_run_without_entries_is_written_as_one_comment_line_and_read_back_empty(tmp_path, reader, name):
    path = tmp_path / name
    write_run(NOTHING, path)
    data = path.read_bytes()
    assert (gzip.decompress(data) if name.endswith(".gz") else data) == (EMPTY_RUN_LINE + "\n").encode()
    assert _is_empty(read_run(path))  # (was: "the run file is empty", for a file the harness wrote)


def test_with_a_header_the_header_alone_is_written(tmp_path, reader):
    header = ["# ir_metadata.start", "# tag: \"x\"", "# ir_metadata.end"]
    write_run(NOTHING, tmp_path / "run.trec", header=header)
    assert (tmp_path / "run.trec").read_text() == "".join(line + "\n" for line in header)
    assert _is_empty(read_run(tmp_path / "run.trec"))


def test_a_run_with_entries_gets_no_extra_line(tmp_path):
    write_run(Run.from_dict({"q1": {}, "q2": {"d": 1.0}}), tmp_path / "run.trec", tag="t")
    assert (tmp_path / "run.trec").read_text() == "q2 Q0 d 1 1.0 t\n"


@pytest.mark.parametrize("data", [b"\n", b"\n\n", b"# only a comment\n\n", b"# a\n#b", b"  \t\n\x0b\n",
                                  b"# crlf\r\n\r\n", b"\xef\xbb\xbf# after a byte-order mark\n"])
def test_blank_and_comment_lines_only_are_a_run_retrieving_nothing(tmp_path, reader, data):
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    assert read_run_columns(lambda: data) is None  # the fast readers leave it to the line reader
    if native.available():
        assert native.read_run_native(data) is None
    assert _is_empty(read_run_lines(data.removeprefix(b"\xef\xbb\xbf"), path))
    assert _is_empty(read_run(path))


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf"])
def test_a_file_without_a_byte_is_refused_as_trec_eval_refuses_it(tmp_path, reader, data):
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value) == f"{path}{REFUSAL}"


def test_an_empty_gzip_member_is_refused_too(tmp_path):
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(InputError, match="the run file is empty"):
        read_run(path)


QRELS = Qrels.from_rows([("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d3", 2), ("q3", "d4", 0)])
METRICS = ["nDCG@10", "MAP@100", "P@10", "Recall@100", "MRR@10"]


def test_the_read_back_empty_run_scores_0_on_every_judged_query_as_trec_eval_c(tmp_path):
    # trec_eval -c (10.x on a '#'-only file: num_q = judged queries, every measure 0); pytrec_eval with each
    # judged query present and no document; ir_measures with the empty run. q3 has no relevant document:
    # left out, as the evaluator leaves such queries out of every run.
    import ir_measures
    import pytrec_eval

    write_run(NOTHING, tmp_path / "run.trec")
    result = Evaluator(METRICS).evaluate(read_run(tmp_path / "run.trec"), QRELS)
    assert result.query_ids.tolist() == ["q1", "q2"]
    assert {m: v.tolist() for m, v in result.values.items()} == {m.replace("nDCG", "NDCG"): [0.0, 0.0] for m in METRICS}
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map_cut.100", "P.10", "recall.100", "recip_rank"})
    assert all(v == 0.0 for q in qrels for v in oracle.evaluate({q: {} for q in qrels})[q].values())
    assert set(ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR], qrels, {}).values()) == {0.0}


def test_an_empty_pipeline_stage_run_is_a_cache_hit(tmp_path):
    # The stage cache writes the run with write_run and reads it back with read_run: an empty stage run
    # was refused on load, so the stage was silently recomputed on every rerun.
    from harness.pipeline.cache import StageCache

    cache = StageCache(tmp_path)
    cache.store("ab" * 32, NOTHING, {"stats": {}})
    loaded = cache.load("ab" * 32)
    assert loaded is not None and _is_empty(loaded[0]) and loaded[1] == {"stats": {}}
