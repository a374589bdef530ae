"""TREC runs, qrels and topics: exact round trips, real ranks, and file:line errors."""

from __future__ import annotations

import numpy as np
import pytest

from harness.datasets.beir import load_beir_folder
from harness.datasets.trec import load_trec_dataset
from harness.errors import InputError
from harness.formats.trec import (read_qrels, read_run, read_topics, read_trec_qrels, write_qrels, write_run,
                                  write_topics_tsv)
from harness.qrels import Qrels
from harness.run import Run

# ---------------------------------------------------------------------------------------------- runs


def test_run_round_trip_is_exact_with_real_ranks(tmp_path):
    third = 1 / 3
    run = Run.from_dict({
        "q2": {"d1": 0.1 + 0.2, "d10": third, "d2": third, "d9": 1e-300},
        "q1": {"a": -2.5, "b": 7.0},
    })
    path = tmp_path / "run.txt"
    write_run(run, path, tag="bm25")
    # Canonical order: score desc, ties by doc id desc as strings ("d2" > "d10"); ranks 1..n; repr scores.
    assert path.read_text().splitlines() == [
        "q2 Q0 d2 1 0.3333333333333333 bm25",
        "q2 Q0 d10 2 0.3333333333333333 bm25",
        "q2 Q0 d1 3 0.30000000000000004 bm25",
        "q2 Q0 d9 4 1e-300 bm25",
        "q1 Q0 b 1 7.0 bm25",
        "q1 Q0 a 2 -2.5 bm25",
    ]
    back = read_run(path)
    assert back.query_ids.tolist() == ["q2", "q1"]
    assert back.doc_ids(0) == ["d2", "d10", "d1", "d9"]
    assert back.scores.tobytes() == run.canonical().scores.tobytes()  # bit-identical floats
    assert back.to_dict() == run.to_dict()


def test_read_run_orders_by_score_and_groups_interleaved_queries(tmp_path):
    path = tmp_path / "run.txt"
    # Ranks disagree with scores on purpose: trec_eval sorts by score and ignores the rank column.
    path.write_text("q1 Q0 a 1 0.5 t\nq2 Q0 a 1 3 t\n\nq1 Q0 b 2 0.9 t\nq1 Q0 c 3 0.9 t\n")
    run = read_run(path)
    assert run.query_ids.tolist() == ["q1", "q2"]
    assert run.doc_ids(0) == ["c", "b", "a"] and run.doc_ids(1) == ["a"]
    assert run.offsets.tolist() == [0, 3, 4]
    assert sorted(run.doc_vocab.tolist()) == ["a", "b", "c"]  # each id interned once
    assert run.vocab_index == {"a": 0, "b": 1, "c": 2}


@pytest.mark.parametrize("content, message", [
    ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4\n", ":2: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("q1 Q0 a 1 high t\n", ":1: score 'high' is not a number (id 'a')"),
    ("q1 Q0 a 1 nan t\n", ":1: score is NaN (id 'a')"),
    ("q1 Q0 a 1 0.5 t\nq2 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4 t\nq1 Q0 a 3 0.3 t\nq1 Q0 a 4 0.2 t\n",
     ":4: document retrieved twice for query 'q1' (first on line 1) (id 'a')"),
    # Not one byte: trec_eval 9 and 10 refuse it ("Cannot read results file"); blank or '#' lines only
    # are a run retrieving nothing (tests/formats/test_trec_empty_run.py).
    ("", ": the run file is empty, which trec_eval refuses too (a run that retrieved nothing is written "
         "as a '#' comment line)"),
])
def test_read_run_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "run.txt"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        read_run(path)
    assert str(err.value) == f"{path}{message}"


def test_write_run_refuses_whitespace_in_tag(tmp_path):
    with pytest.raises(ValueError, match="run tag"):
        write_run(Run.from_dict({"q": {"d": 1.0}}), tmp_path / "r.txt", tag="my run")
    assert not (tmp_path / "r.txt").exists()


def test_read_run_at_scale_keeps_every_entry(tmp_path):
    rng = np.random.default_rng(0)
    n_q, depth = 200, 100
    path = tmp_path / "big.run"
    docs = rng.integers(0, 5000, size=(n_q, depth * 2))
    lines = []
    for q in range(n_q):
        picked = list(dict.fromkeys(docs[q].tolist()))[:depth]
        lines += [f"q{q} Q0 doc{d} {r + 1} {float(depth - r)!r} x" for r, d in enumerate(picked)]
    path.write_text("\n".join(lines) + "\n")
    run = read_run(path)
    assert len(run) == len(lines) == n_q * depth
    assert len(run.doc_vocab) == len({line.split()[2] for line in lines})


# --------------------------------------------------------------------------------------------- qrels


def test_qrels_round_trip_and_conflicts(tmp_path):
    qrels = Qrels.from_rows([("q1", "d1", 1.0), ("q1", "d2", 0.0), ("q2", "d1", 2.0), ("q2", "d3", 0.5)])
    path = tmp_path / "qrels.txt"
    write_qrels(qrels, path)
    assert path.read_text() == "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\nq2 0 d3 0.5\n"
    assert read_qrels(path).to_dict() == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2, "d3": 0.5}}
    path.write_text("q1 0 d1 1\nq1 0 d1 1\nq1 0 d1 2\n")  # same grade twice is fine; a different one is not
    with pytest.raises(InputError) as err:
        read_trec_qrels(path)
    assert str(err.value) == f"{path}:3: conflicting grade for document 'd1' (line 1 says 1) (id 'q1')"
    path.write_text("q1 0 d1\n")
    with pytest.raises(InputError, match=r"qrels.txt:1: expected 4 columns"):
        read_trec_qrels(path)


def test_read_qrels_detects_beir_tsv(nfcorpus_dir):
    qrels = read_qrels(nfcorpus_dir / "qrels" / "test.tsv")
    assert len(qrels) == 12334 and int((qrels.grades == 2).sum()) == 576  # PROVENANCE.md


# -------------------------------------------------------------------------------------------- topics

CLASSIC = """<top>

<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity, the activity, and, if possible, collaborating organizations
and the countries involved.

<narr> Narrative:
A relevant document must as a minimum identify the organization and the
type of illegal activity.
</top>

<top>
<num> Number: 302 <title> Poliomyelitis and Post-Polio </title>
<desc> Description: Is the disease of Poliomyelitis (polio) under control in the world?
<narr> Narrative: Relevant documents should contain data.
</top>
"""


def test_classic_topics_title_and_description(tmp_path):
    path = tmp_path / "topics.txt"
    path.write_text(CLASSIC)
    titles = read_topics(path)
    assert titles.ids == ["301", "302"]
    assert titles.texts == ["International Organized Crime", "Poliomyelitis and Post-Polio"]
    desc = read_topics(path, field="desc")
    assert desc.texts[0] == ("Identify organizations that participate in international criminal activity, the "
                             "activity, and, if possible, collaborating organizations and the countries involved.")
    assert desc.texts[1] == "Is the disease of Poliomyelitis (polio) under control in the world?"


@pytest.mark.parametrize("content, message", [
    ("<num> Number: 1\n", ":1: <num> outside <top>"),
    ("<top>\n<num> 1\n<title> x\n", ":1: <top> never closed"),
    ("<top>\n<title> x\n</top>\n", ":1: topic without <num>"),
    ("<top><num> 1 <title> a </top>\n<top><num> 1 <title> b </top>\n", ":2: duplicate topic number (first at line 1) (id '1')"),
])
def test_classic_topic_errors(tmp_path, content, message):
    path = tmp_path / "topics.txt"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        read_topics(path)
    assert str(err.value) == f"{path}{message}"


def test_tsv_topics(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("1\twhat is the origin of COVID-19?\r\n2\t  coronavirus  weather \n\n")
    topics = read_topics(path)
    assert topics.ids == ["1", "2"] and topics.texts == ["what is the origin of COVID-19?", "coronavirus  weather"]
    path.write_text("1\ta\n1 no tab here\n")
    with pytest.raises(InputError, match=r"topics.tsv:2: expected 'query-id<TAB>text'"):
        read_topics(path)
    path.write_text("1\ta\n1\tb\n")
    with pytest.raises(InputError, match=r"topics.tsv:2: duplicate query id \(first on line 1\)"):
        read_topics(path)


# ------------------------------------------------------------------------------------ whole collection


def test_dataset_from_corpus_folder_plus_trec_topics_and_qrels(nfcorpus_dir, tmp_path):
    ref = load_beir_folder(nfcorpus_dir)
    write_topics_tsv(ref.queries, tmp_path / "topics.tsv")
    write_qrels(ref.qrels, tmp_path / "qrels.txt")
    ds = load_trec_dataset(nfcorpus_dir, tmp_path / "topics.tsv", tmp_path / "qrels.txt")
    # same collection as the BEIR folder: 3,633 docs, 323 queries, 12,334 judgments (PROVENANCE.md)
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (3633, 323, 12334)
    assert ds.name == "nfcorpus" and ds.warnings == []
    assert ds.qrels.to_dict() == ref.qrels.to_dict()
    assert ds.queries.as_dict() == {q: " ".join(t.split()) for q, t in ref.queries.as_dict().items()}
