"""A bench config's ``metrics`` read as compare -m reads them (checkgate review)."""

from __future__ import annotations

import pytest

from harness.bench import ConfigError, parse_config


def _config(metrics):
    return parse_config({"name": "b", "datasets": ["scifact"], "retrievers": [{"type": "bm25"}], "metrics": metrics},
                        source="tiny.toml")


def test_a_family_named_by_a_level_stands_for_its_levels():
    """metrics = ["iprec_at_recall"] was refused with 'iprec_at_recall needs a recall level, e.g.
    iprec_at_recall_0.10; in a metric list iprec_at_recall alone stands for the 11 levels' -- about the very
    metric list it refused. As in harness run -m and compare -m: trec_eval's 11 levels 0.00 ... 1.00."""
    config = _config(["iprec_at_recall", "NDCG@10"])
    assert config.metrics == (*[f"iprec_at_recall_{p / 10:.2f}" for p in range(11)], "NDCG@10")


def test_other_names_read_as_before():
    assert _config(["nDCG@10", "ndcg_cut_10", "map", "mrr", "P.10"]).metrics == ("NDCG@10", "AP", "RR", "P@10")
    with pytest.raises(ConfigError, match=r"^tiny.toml: metrics\[0\]: NDCG needs a cutoff"):
        _config(["NDCG"])
