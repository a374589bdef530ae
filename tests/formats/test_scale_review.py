"""Scale review: the compiled run reader's vocabulary when one document id is long.

The reader returned the distinct document ids as fixed-width UCS4 (numpy ``U<width>``), ``width``
the longest id: one long id made every entry that wide. A run of 20,000 distinct short ids and one of
1,000 characters (a 0.5 MB file) took 80 MB of vocabulary (distinct x 1,000 x 4 bytes); FEVER's
Wikipedia-title ids (up to 255 bytes) over a 10M-line run, or a single 2,000-character id among 5M,
took gigabytes to tens of gigabytes: a MemoryError on a valid run. Past 64 MiB and 4 times the file
the vocabulary is now a list of str (the same ids, in the same string order). The pyarrow reader
(``HARNESS_TREC_COMPILED=0``) padded every entry's id to the longest (entries x width bytes) and made the
same vocabulary: past ``columnar.PADDED_AT`` (64 MiB) and 4 times the ids' bytes it leaves the file to
the line reader.

Expected values: the line reader (``trec.read_run_lines``, the reference grammar) and pytrec_eval."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from harness.evaluation.evaluator import evaluate
from harness.formats import columnar, native, trec
from harness.qrels import Qrels

compiled = pytest.mark.skipif(not native.available(), reason="the compiled run reader is not built")


def _long_id_run(tmp_path, accent: str = "é"):
    lines = []
    for i in range(20_000):
        doc = "L" * 1_000 if i == 7 else f"d{i % 19_000}{accent}" if i % 3 else f"d{i}"
        lines.append(f"q{i // 200} Q0 {doc} {i % 200 + 1} {(i * 7919) % 1000 / 8} run")
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@compiled
def test_one_long_id_does_not_make_every_vocabulary_entry_that_wide(tmp_path):
    path = _long_id_run(tmp_path)
    run = trec.read_run(path)
    # (was: dtype <U1000, 19,999 x 1,000 x 4 bytes = 80 MB for a 0.5 MB file)
    assert run.doc_vocab.nbytes < 4 * path.stat().st_size
    reference = trec.read_run_lines(path.read_bytes(), path)
    assert run.n_vocab == reference.n_vocab == 19_668
    assert run.query_ids.tolist() == reference.query_ids.tolist()
    assert run.to_dict() == reference.to_dict()
    assert run.doc_vocab.tolist() == sorted(run.doc_vocab.tolist())  # string order: codes break ties
    assert (np.diff(run.offsets) == 200).all()


@compiled
def test_a_run_with_an_object_vocabulary_evaluates_as_pytrec_eval(tmp_path):
    path = _long_id_run(tmp_path)
    run = trec.read_run(path)
    rng = np.random.default_rng(5)
    rows = [(f"q{q}", doc, int(rng.integers(0, 3))) for q in range(100)
            for doc in rng.choice(run.doc_ids(q), 5, replace=False).tolist()]
    rows.append(("q3", "L" * 1_000, 2))
    qrels = Qrels.from_rows(rows)
    got = evaluate(run, qrels, ["NDCG@10", "P@5", "MAP@100"]).means
    judged: dict = {}
    for q, d, g in rows:
        judged.setdefault(q, {})[d] = g
    oracle = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "P.5", "map_cut.100"})
    per_query = oracle.evaluate(run.to_dict()).values()
    evaluated = [v for q, v in zip(judged, per_query) if any(g >= 1 for g in judged[q].values())]
    for name, measure in (("NDCG@10", "ndcg_cut_10"), ("P@5", "P_5"), ("MAP@100", "map_cut_100")):
        want = sum(v[measure] for v in evaluated) / len(evaluated)
        assert got[name] == pytest.approx(want, abs=1e-12), name


def test_the_pyarrow_reader_leaves_a_run_with_one_long_id_to_the_line_reader(tmp_path, monkeypatch):
    """The limit lowered to 1 MiB (its 64 MiB in a 20,000-line run): 20,000 ids padded to 1,000 bytes."""
    path = _long_id_run(tmp_path, accent="")  # (ASCII ids: the pyarrow reader's)
    data = path.read_bytes()
    monkeypatch.setattr(columnar, "PADDED_AT", 1 << 20, raising=False)
    assert columnar.read_run_columns(lambda: data) is None  # (was: a run with a <U1000 vocabulary, 80 MB)
    monkeypatch.setenv(native.SWITCH, "0")
    run = trec.read_run(path)
    assert run.doc_vocab.nbytes < 4 * len(data)
    assert run.to_dict() == trec.read_run_lines(data, path).to_dict()
    short = data.replace(b"L" * 1_000, b"L")  # ids of their usual width: still read column-wise
    assert columnar.read_run_columns(lambda: short) is not None
