"""``harness fuse --optimize --metric`` with one of trec_eval's measures (harness/fusion/optimize.py).

``--metric iprec_at_recall`` (or ir_measures' ``IPrec``) stands for 11 levels, and was refused with
``optimisation needs one metric with its cutoff (e.g. NDCG@10)``: iprec_at_recall takes no cutoff, and
``iprec_at_recall@10`` is no metric. The line now names a level. A single measure of the whole
ranking (``RR``, ``iprec_at_recall_0.50``) is optimised like ``NDCG@10``.

A name is read as ``harness compare -m`` and ``check -m`` read one name: ``--metric map`` was refused
(``Evaluator(["map"])`` is MAP at every cutoff) where compare reads it as ``AP``; ``--metric num_ret`` was
"optimised": every weight gives the same count, so the chosen one was the first tried, reported as best."""

from __future__ import annotations

import pytest

from harness.fusion.optimize import single_metric_evaluator


@pytest.mark.parametrize("name", ["iprec_at_recall", "IPrec"])
def test_a_family_of_levels_is_refused_naming_a_level(name):
    with pytest.raises(ValueError) as error:
        single_metric_evaluator(name)
    assert str(error.value) == (f"optimisation needs one metric with its level (e.g. iprec_at_recall_0.50), "
                                f"got {name!r}")


def test_a_family_of_cutoffs_is_still_refused_naming_a_cutoff():
    with pytest.raises(ValueError, match=r"^optimisation needs one metric with its cutoff \(e.g. NDCG@10\), "
                                         r"got 'NDCG'$"):
        single_metric_evaluator("NDCG")


@pytest.mark.parametrize("name,canonical", [("RR", "RR"), ("recip_rank", "RR"), ("IPrec@0.5", "iprec_at_recall_0.50"),
                                            ("set_F", "set_F"), ("NDCG_all", "NDCG_all"), ("map", "AP"),
                                            ("mrr", "RR"), ("MAP", "AP"), ("set_F.0.5", "set_F_0.50"),
                                            ("num_rel_ret", "num_rel_ret")])
def test_one_whole_ranking_measure_is_one_metric(name, canonical):
    assert [m.name for m in single_metric_evaluator(name).metrics] == [canonical]


@pytest.mark.parametrize("name,what", [("num_ret", "the number of documents retrieved"),
                                       ("num_rel", "the number of relevant documents judged"),
                                       ("num_nonrel_judged_ret", "the number of judged non-relevant documents")])
def test_a_count_is_refused_as_no_quality_measure(name, what):
    with pytest.raises(ValueError, match=rf"^optimisation needs a quality measure: {name} is {what}"):
        single_metric_evaluator(name)


def test_a_family_of_several_levels_names_its_middle_level():
    with pytest.raises(ValueError, match=r"^optimisation needs one metric with its level \(e.g. Rprec_mult_1.20\)"):
        single_metric_evaluator("Rprec_mult")
