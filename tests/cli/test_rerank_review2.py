"""`harness rerank` (second review): --depth past int64 is one line and exit 2, as `harness run` refuses it.

`--depth 99999999999999999999999` reached numpy's int64 arithmetic and ended in a traceback
(OverflowError: Python int too large to convert to C long, exit 1); ranks and counts are int64, so
2^63 - 1 is the largest depth (reranking "everything"), which works.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from harness.reranker import Candidates, Reranker
from harness.run import Run
from tests.cli.test_rerank_cli import main_in_process


class ByRow(Reranker):
    """Score = minus the document's corpus row (deterministic, no model)."""

    name = "by-row"

    def score(self, candidates, queries, corpus):
        return -candidates.doc_rows.astype(np.float64)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ds" / "qrels").mkdir(parents=True)
    (tmp_path / "ds" / "corpus.jsonl").write_text("".join(
        f'{{"_id": "{d}", "title": "", "text": "t"}}\n' for d in ("d1", "d2", "d3")))
    (tmp_path / "ds" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "ds" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    (tmp_path / "first.trec").write_text("q1 Q0 d3 1 3.0 f\nq1 Q0 d1 2 2.0 f\nq1 Q0 d2 3 1.0 f\n")
    return tmp_path


def test_a_depth_past_int64_is_refused_in_one_line(files, monkeypatch, capsys):
    out = files / "out.trec"
    args = ("rerank", "-d", str(files / "ds"), "--run", str(files / "first.trec"), "-r",
            f"{__name__}:ByRow", "-o", str(out), "--quiet")
    code, _, err = main_in_process(monkeypatch, capsys, *args, "--depth", "99999999999999999999999")
    assert code == 2 and "--depth must be >= 1 and at most 2^63 - 1" in err and "Traceback" not in err
    assert not out.exists()
    code, _, err = main_in_process(monkeypatch, capsys, *args, "--depth", str(2**63 - 1))
    assert code == 0, err
    assert out.read_text() == "q1 Q0 d1 1 -0.0 by-row\nq1 Q0 d2 2 -1.0 by-row\nq1 Q0 d3 3 -2.0 by-row\n"


def test_the_python_api_refuses_it_as_a_value_error():
    corpus, queries = Corpus(["d1"], [""], ["t"]), Queries(["q1"], ["x"])
    run = Run.from_dict({"q1": {"d1": 1.0}})
    with pytest.raises(ValueError, match=r"depth must be an integer >= 1 and at most 2\^63 - 1"):
        Candidates.of(run, queries, corpus, 2**63)  # was: OverflowError
    assert len(Candidates.of(run, queries, corpus, 2**63 - 1)) == 1
