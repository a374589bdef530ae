"""Second review of ``hf:`` sources (harness/datasets/hf.py), with the faults found in ``irds:`` in mind.

No network: each test builds a local folder laid out like a hub repo (``test_hf.write_hub_repo``).
"""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
datasets = pytest.importorskip("datasets")

from harness.datasets.beir import load_beir_folder  # noqa: E402
from harness.datasets.hf import load_hf_dataset  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.evaluation import Evaluator  # noqa: E402
from harness.pipeline import run_pipeline  # noqa: E402
from harness.pipeline.cache import StageCache  # noqa: E402
from harness.pipeline.spec import parse_pipeline  # noqa: E402

from tests.datasets.test_hf import write_hub_repo  # noqa: E402

HEADER = "query-id\tcorpus-id\tscore\n"


def _corpus(repo, table) -> None:
    pq.write_table(table, repo / "corpus" / "corpus.parquet")


def _queries(repo, table) -> None:
    pq.write_table(table, repo / "queries" / "queries.parquet")


def test_a_pipeline_stage_is_not_reused_for_a_local_folder_whose_corpus_changed(tmp_path, monkeypatch):
    """``Dataset.files`` held ``datasets``' fingerprints only, which name a local folder by its README:
    rewriting the corpus (same path, same README, same qrels file) gave the same ``files``, so the
    pipeline stage cache (and a bench cell) keyed on them was a "hit" with the old content's numbers.
    Worked example: q1 "apple" judges d1; first d1 = "apple banana" (BM25 ranks d1 first: NDCG@1 1.0),
    then the texts are swapped (d2 first: NDCG@1 0.0, as a fresh computation gives). Before the fix the
    second run was (1.0, "hit")."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "harness-cache"))
    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    _queries(repo, pa.table({"_id": ["q1"], "text": ["apple"]}))
    pipeline = parse_pipeline({"name": "p", "stages": [{"name": "bm25", "type": "retrieve", "retriever": "bm25"}]},
                              "p.toml")

    def ndcg_at_1(texts: list[str]) -> tuple[float, str, dict]:
        _corpus(repo, pa.table({"_id": ["d1", "d2"], "title": ["", ""], "text": texts}))
        ds = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
        exp, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@1"]), [1], depth=2,
                                     cache=StageCache(tmp_path / "stages"))
        return exp.document.metrics["NDCG@1"], outcomes[-1].status, ds.files

    first, status, old_files = ndcg_at_1(["apple banana", "cherry grape"])
    assert (first, status) == (1.0, "miss")
    second, status, new_files = ndcg_at_1(["cherry grape", "apple banana"])
    assert (second, status) == (0.0, "miss")
    assert new_files.keys() == old_files.keys() and new_files[next(iter(new_files))] != old_files[next(iter(old_files))]
    assert ndcg_at_1(["cherry grape", "apple banana"])[:2] == (0.0, "hit")  # the same content: reused


def test_query_and_corpus_values_that_are_no_strings_are_read_by_one_rule(tmp_path):
    """A query text of 0 became "" (``x or ""``) and one of 5 stayed the int 5 (then BM25 failed with a
    TypeError traceback); a float query id 1.0 became "1.0" while the same corpus id became "1" (Arrow's
    cast). Expected: both read as Arrow casts them ("0", "5", "1"), as the corpus always was."""
    repo, qrels = write_hub_repo(tmp_path, ["d1"], ["q1"])
    _corpus(repo, pa.table({"_id": [1.0, 2.0], "title": ["", ""], "text": [0, 5]}))
    _queries(repo, pa.table({"_id": [1.0, 2.0], "text": [0, 5]}))
    (qrels / "test.tsv").write_text(HEADER + "1\t1\t1\n2\t2\t1\n")
    ds = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert ds.corpus.ids == ["1", "2"] and list(ds.corpus.texts) == ["0", "5"]
    assert (ds.queries.ids, ds.queries.texts) == (["1", "2"], ["0", "5"])
    assert ds.warnings == []


def test_absent_title_or_text_columns_are_empty_as_in_a_folder(tmp_path):
    """A corpus without a ``title`` column failed with a bare ``ValueError`` (a queries config without
    ``text``: a ``KeyError`` traceback); a BEIR folder reads an absent title or text as "". Expected:
    the same dataset as the folder with the same content (no title fields)."""
    repo, qrels = write_hub_repo(tmp_path, ["d1"], ["q1"])
    _corpus(repo, pa.table({"_id": ["d1", "d2"], "text": ["apple", "pear"]}))
    _queries(repo, pa.table({"_id": ["q1"], "title": ["ignored"]}))
    (qrels / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    folder = tmp_path / "folder"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "apple"}\n{"_id": "d2", "text": "pear"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "title": "ignored"}\n')
    (folder / "qrels" / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    ds, ref = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache"), load_beir_folder(folder)
    assert (ds.corpus.ids, list(ds.corpus.titles), list(ds.corpus.texts)) == (["d1", "d2"], ["", ""], ["apple", "pear"])
    assert (ds.queries.ids, ds.queries.texts) == (["q1"], [""]) == (ref.queries.ids, ref.queries.texts)
    assert ds.corpus.contents() == ref.corpus.contents()


@pytest.mark.parametrize("table, message", [
    (pa.table({"id": ["d1"], "title": [""], "text": ["x"]}), "corpus: no '_id' column (columns: id, title, text)"),
    (pa.table({"_id": ["d1"], "title": [["a", "b"]], "text": ["x"]}),
     "corpus: column 'title' holds list<element: string>, not text"),
])
def test_a_corpus_layout_that_is_no_beir_corpus_is_one_line_naming_the_column(tmp_path, table, message):
    """Before: a ``KeyError`` and an ``ArrowNotImplementedError`` traceback."""
    repo, qrels = write_hub_repo(tmp_path, ["d1"], ["q1"])
    _corpus(repo, table)
    (qrels / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    with pytest.raises(HarnessError) as err:
        load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert str(err.value).replace("list<item: string>", "list<element: string>") == f"{repo}:{message}"


@pytest.mark.parametrize("tsv, expected", [
    ("q1\td1\t1\nq1\td2\t2\n", {"q1": {"d1": 1, "d2": 2}}),  # no header (optional for the folder loader)
    ("qid\tdocid\trel\nq1\td1\t1\n", {"q1": {"d1": 1}}),  # another header
])
def test_qrels_tsv_headers_are_the_folder_loaders(tmp_path, tsv, expected):
    """``datasets`` took the first line as the column names: a headerless TSV (which the folder loader
    reads) or another header failed with "DatasetGenerationError: An error occurred while generating the
    dataset". Expected: the folder loader's judgments (``read_beir_qrels`` of the same file)."""
    from harness.formats.trec import read_beir_qrels

    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_text(tsv)
    assert read_beir_qrels(qrels / "test.tsv").to_dict() == expected
    assert load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache").qrels.to_dict() == expected


@pytest.mark.parametrize("tsv, line", [
    (HEADER.replace("score", "score\textra") + "q1\td1\t1\tx\n", 1),  # loaded, the 4th column dropped
    (HEADER + "q1\td1\t1\n\n# note\nq1\td2\t1\tx\n", 5),  # pandas' own error, no line
])
def test_qrels_tsv_errors_name_the_files_line(tmp_path, tsv, line):
    """A TSV of 4 columns (header included) was loaded with its 4th column dropped silently, a line of 4
    fields under a 3-column header failed with "DatasetGenerationError: An error occurred while
    generating the dataset"; the folder loader refuses both, naming the line. Expected: its message,
    with the file's line number (a blank line counted)."""
    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_text(tsv)
    with pytest.raises(HarnessError) as err:
        load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert str(err.value) == (f"{qrels}:test:{line}: expected 3 tab-separated columns (query-id, corpus-id, score), "
                              "got 4")


def test_a_local_qrels_folder_reads_the_splits_own_tsv_only(tmp_path):
    """``datasets``' split patterns read ``test.tsv.bak`` and ``test2.tsv`` into split ``test`` too: q2's
    judgment was added silently. A BEIR folder reads ``qrels/test.tsv`` alone. Expected: test.tsv's
    judgments only."""
    repo, qrels = write_hub_repo(tmp_path, ["d1", "d2"], ["q1", "q2"])
    (qrels / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    (qrels / "test.tsv.bak").write_text(HEADER + "q2\td2\t1\n")
    (qrels / "test2.tsv").write_text(HEADER + "q2\td1\t2\n")
    assert load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache").qrels.to_dict() == {"q1": {"d1": 1}}


def test_an_error_datasets_wraps_is_one_line_with_its_cause(tmp_path):
    """``datasets`` wraps a failed read in "DatasetGenerationError: An error occurred while generating the
    dataset", which was the whole message (a qrels TSV in Latin-1 here; the folder loader says "not valid
    UTF-8 (byte 0xe9 at column 5)"). Expected: one line that carries the cause too."""
    repo, qrels = write_hub_repo(tmp_path, ["d1"], ["q1"])
    (qrels / "test.tsv").write_bytes((HEADER + "q1\td\xe9\t1\n").encode("latin-1"))
    with pytest.raises(HarnessError) as err:
        load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    message = str(err.value)
    assert message.startswith(f"cannot load the 'test' qrels from {str(qrels)!r}: DatasetGenerationError: ")
    assert "(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 4" in message and "\n" not in message


def test_a_local_repo_named_with_a_tilde_loads(tmp_path, monkeypatch):
    """``hf:~/repos/BeIR/tiny``: the harness expanded ``~`` for the folder's digest but ``datasets`` did
    not, so the load failed ("FileNotFoundError: Couldn't find any data file at /root/..."). Expected: the
    same dataset as the folder named without it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    repo, qrels = write_hub_repo(tmp_path / "repos", ["d1", "d2"], ["q1"])
    (qrels / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    ds = load_hf_dataset("~/repos/BeIR/tiny", cache_dir=tmp_path / "hf-cache")
    plain = load_hf_dataset(str(repo), cache_dir=tmp_path / "hf-cache")
    assert (ds.corpus.ids, ds.queries.ids, ds.qrels.to_dict()) == (["d1", "d2"], ["q1"], {"q1": {"d1": 1}})
    assert list(ds.corpus.texts) == list(plain.corpus.texts) and ds.queries.texts == plain.queries.texts
