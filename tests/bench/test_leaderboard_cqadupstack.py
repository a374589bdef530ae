"""CQADupStack in a benchmark is one dataset, as BEIR reports it (beirsuite review).

BEIR's tables have one CQADupStack row: each of its 12 forums evaluated on its own, the row the
unweighted mean of the 12 forums' values, and the average over datasets counting it once (the BEIR
paper's tables; Pyserini's ``pyserini/2cr/beir.py`` averages the 12 ``cqadupstack-*`` scores, then rolls
that one score into the mean over datasets; MTEB's ``scripts/average_cqadupstack.py``).

Expected numbers worked by hand from the per-forum values below:

* retriever ``a``: forum i (registry order, i = 0..11) has value i/12, so the forums' mean is
  (0 + 1 + ... + 11) / 12 / 12 = 66/144 = 0.458333...; with scifact 0.7 the average is
  (0.7 + 66/144) / 2 = 0.579166...
* retriever ``b``: every forum 0.5 (mean 0.5); scifact 0.6; average (0.6 + 0.5) / 2 = 0.55.

The old leaderboard had 13 rows (scifact and the 12 forums under their forum labels) and averaged them:
a (0.7 + 5.5) / 13 = 0.476923..., b (0.6 + 6.0) / 13 = 0.507692...: CQADupStack weighted 12 times, and b
ranked above a.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from harness.bench.cells import cells
from harness.bench.config import parse_config
from harness.bench.leaderboard import CellOutcome, build, markdown
from harness.datasets.registry import lookup
from harness.errors import ConfigError

FORUMS = list(lookup("cqadupstack").subsets)  # android, english, ..., wordpress (12)
VALUES = {"a": {"scifact": 0.7, **{f: i / 12 for i, f in enumerate(FORUMS)}},
          "b": {"scifact": 0.6, **{f: 0.5 for f in FORUMS}}}


def _config(datasets) -> object:
    return parse_config({"name": "suite", "metrics": ["NDCG@10"], "datasets": datasets,
                         "retrievers": [{"type": "bm25", "label": "a"}, {"type": "bm25", "label": "b"}]})


def _document(value: float) -> SimpleNamespace:
    return SimpleNamespace(metrics={"NDCG@10": value}, bench={}, n_queries=1, timings={}, dataset={},
                           retriever_stats=None, efficiency=None, stages=None, warnings=None)


def _board(config, missing=()):
    outcomes = []
    for cell in cells(config):
        d, r = cell.dataset.label, cell.retriever.label
        if (d, r) in missing:
            outcomes.append(CellOutcome(cell, "failed", error="boom"))
        else:
            outcomes.append(CellOutcome(cell, "run", _document(VALUES[r][d])))
    return build(config, outcomes)


def test_cqadupstack_is_one_row_the_mean_of_its_12_forums_counted_once_in_the_average():
    board = _board(_config(["scifact", "cqadupstack"]))
    table = board["tables"]["NDCG@10"]
    assert board["datasets"] == ["scifact", "cqadupstack"]
    assert list(table["rows"]) == ["scifact", "cqadupstack"]
    assert table["rows"]["cqadupstack"]["a"] == pytest.approx(66 / 144, abs=1e-15)
    assert table["rows"]["cqadupstack"]["b"] == pytest.approx(0.5, abs=1e-15)
    assert table["average"]["a"] == pytest.approx((0.7 + 66 / 144) / 2, abs=1e-15)  # 0.579166..., not 0.476923
    assert table["average"]["b"] == pytest.approx(0.55, abs=1e-15)  # not 0.507692
    # the forums' own values stay available
    assert list(table["forums"]["cqadupstack"]) == FORUMS
    assert table["forums"]["cqadupstack"]["english"] == {"a": 1 / 12, "b": 0.5}
    assert board["forums"] == {"cqadupstack": {"title": "CQADupStack", "forums": FORUMS, "of": 12}}
    json.dumps(board)  # (leaderboard.json)
    text = markdown(board)
    assert "| cqadupstack | 0.4583 | **0.5000** |" in text
    assert "| **average** | **0.5792** | 0.5500 |" in text
    assert "## CQADupStack forums: NDCG@10" in text
    assert "| english | 0.0833 | 0.5000 |" in text and "| **cqadupstack** (mean) | 0.4583 | 0.5000 |" in text


def test_listing_the_12_forums_gives_the_same_row_as_listing_cqadupstack():
    listed = _board(_config(["scifact", *[f"cqadupstack/{f}" for f in FORUMS]]))
    whole = _board(_config(["scifact", "cqadupstack"]))
    assert listed["tables"] == whole["tables"] and listed["datasets"] == ["scifact", "cqadupstack"]
    # "cqadupstack/" is cqadupstack (as "msmarco/" is msmarco), and so is a table's name
    for entry in ("cqadupstack/", {"name": "cqadupstack"}):
        assert [d.source for d in _config([entry]).datasets] == [f"cqadupstack/{f}" for f in FORUMS]


def test_the_cqadupstack_row_needs_all_12_forums():
    # one forum's cell failed: no cqadupstack value for that retriever, so no average for it (an average
    # over 11 forums is not BEIR's number); the other retriever keeps both
    board = _board(_config(["scifact", "cqadupstack"]), missing={("gis", "a")})
    table = board["tables"]["NDCG@10"]
    assert table["rows"]["cqadupstack"] == {"a": None, "b": pytest.approx(0.5, abs=1e-15)}
    assert table["average"] == {"a": None, "b": pytest.approx(0.55, abs=1e-15)}
    assert table["forums"]["cqadupstack"]["gis"] == {"a": None, "b": 0.5}
    # only some forums listed: no cqadupstack row (a mean of 2 forums is not BEIR's number); the forums are
    # datasets of their own, a row each, counted in the average as any dataset: a (0.7 + 0/12 + 3/12) / 3
    board = _board(_config(["scifact", "cqadupstack/android", "cqadupstack/gis"]))
    table = board["tables"]["NDCG@10"]
    labels = [d.label for d in _config(["scifact", "cqadupstack/android", "cqadupstack/gis"]).datasets]
    assert list(table["rows"]) == labels and len(labels) == 3 and "forums" not in table and "forums" not in board
    assert table["average"]["a"] == pytest.approx((0.7 + VALUES["a"][labels[1]] + VALUES["a"][labels[2]]) / 3, abs=1e-15)
    assert "CQADupStack forums" not in markdown(board)


def test_a_cqadupstack_entry_is_its_12_forums_and_round_trips():
    config = _config(["scifact", "cqadupstack"])
    assert [d.label for d in config.datasets] == ["scifact", *FORUMS]
    assert [d.source for d in config.datasets[1:]] == [f"cqadupstack/{f}" for f in FORUMS]
    assert {d.split for d in config.datasets} == {"test"}
    assert parse_config(config.to_dict()) == config


@pytest.mark.parametrize("datasets, message", [
    ([{"name": "cqadupstack", "label": "cqa"}],
     "datasets[0].label: cqadupstack is 12 forums, each labelled by its forum name; to label them, list "
     "cqadupstack/<forum> entries"),
    (["cqadupstack", "cqadupstack-gis"],
     'datasets[1]: cqadupstack forum "gis" is listed twice (also datasets[0]); each forum is one part of the '
     'cqadupstack row'),
    (["cqadupstack/gis", {"path": "some/folder", "label": "cqadupstack"}],
     'datasets[1].label: dataset label "cqadupstack" is the leaderboard row of the cqadupstack forums this config '
     'lists; give the entry another label'),
    (["cqadupstack", {"path": "some/folder", "label": "gis"}],
     'datasets[1].label: duplicate dataset label "gis" (also datasets[0]); give each entry a distinct label'),
])
def test_configs_the_cqadupstack_row_cannot_be_made_of_are_refused_naming_the_entry(datasets, message):
    with pytest.raises(ConfigError) as info:
        _config(datasets)
    assert str(info.value) == f"<config>: {message}"
