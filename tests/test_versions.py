"""metrics.json records the build that computed it (harness.versions.recorded, written by MetricsDocument.build).

Before, ``versions`` held the release ("0.1.0", not bumped per change), Python and the libraries only:
a result computed before 9be498f (NDCG_exp 0.0 for a perfect ranking of grades below 1) and one after
recorded the same versions, and ``harness evaluate --json`` and pipeline results recorded no commit at
all (the git commit was only in ``harness run``'s efficiency fingerprint).
"""

from __future__ import annotations

import json

import harness
from harness.fingerprint import git_commit
from harness.versions import NUMBERS_VERSION, RUNS_VERSION, recorded, versions


def test_evaluate_json_records_the_release_numbers_and_runs_versions_and_the_commit(tmp_path, harness_cli):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d3 1 2.0 x\n")
    proc = harness_cli("evaluate", "--qrels", tmp_path / "q.txt", "--run", tmp_path / "r.trec",
                       "--json", tmp_path / "m.json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads((tmp_path / "m.json").read_text())["versions"]
    assert found["retrieval-harness"] == harness.__version__
    assert found["numbers_version"] == NUMBERS_VERSION == 3  # (3: order-free means, harness.evaluation.mean)
    assert found["runs_version"] == RUNS_VERSION == 2
    assert found["git"] == git_commit()  # (the harness source's commit; None outside git)
    assert {name: found[name] for name in versions()} == versions()  # python and the libraries, as before
    assert list(found)[:4] == ["retrieval-harness", "numbers_version", "runs_version", "git"]


def test_one_definition_of_each_version():
    """The bench cells' reuse check and the stage cache keys take the constants metrics.json records."""
    from harness.bench import cells
    from harness.pipeline import cache

    assert cells.NUMBERS_VERSION is NUMBERS_VERSION and cache.RUNS_VERSION is RUNS_VERSION
    assert recorded()["numbers_version"] == NUMBERS_VERSION and recorded()["runs_version"] == RUNS_VERSION


def test_the_libraries_the_numbers_depend_on_are_recorded():
    """pyarrow parses every corpus (pyarrow.json) and, without the compiled reader, every run (pyarrow.csv);
    regex gives the default BM25 tokenizer its Unicode word breaks (retrievers/bm25/tokenizer.py), so its
    Unicode tables decide the tokens of non-ASCII text. Neither was recorded (versions held numpy, the
    retrievers' libraries and datasets)."""
    from importlib.metadata import version

    found = recorded()
    assert found["pyarrow"] == version("pyarrow") and found["regex"] == version("regex")
