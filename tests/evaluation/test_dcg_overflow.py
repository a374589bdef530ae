"""DCG@k is a finite double or a one-line error, never ``inf`` (metrics.json must stay strict JSON).

The rule (harness/evaluation/metrics/dcg.py, ``DCG``): DCG@k is refused when some evaluated query's
ideal DCG@k (its judged grades sorted descending) overflows a double. Under ``exp`` (gain 2^rel - 1)
that is any grade of 1024 or more, or several grades near 1023 whose discounted gains sum past
1.8e308. The ideal bounds every run's DCG@k, so the rule depends on the qrels and k only.
Expected values are computed here exactly (integers, Fractions) and rounded once.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from harness.evaluation import Evaluator
from harness.evaluation.metrics import DCG
from harness.evaluation.metrics.dcg import GainOverflow
from harness.qrels import Qrels
from harness.run import Run

RUN = Run.from_dict({"q": {"low": 2.0, "mid": 1.0}, "p": {"x": 1.0}})


def test_a_grade_past_1023_is_refused_naming_query_document_and_grade():
    # 2^1100 - 1 is past the largest double (~2^1024): DCG_exp@2 was inf, and metrics.json held Infinity.
    qrels = Qrels.from_dict({"q": {"low": 1, "high": 1100}, "p": {"x": 1}})
    with pytest.raises(GainOverflow) as info:
        Evaluator(["DCG_exp@2"]).evaluate(RUN, qrels)
    message = str(info.value)
    assert message == ("DCG_exp@2 would be infinite: query 'q', document 'high', qrels grade 1100: its gain "
                       "2^1100 - 1 overflows a double (DCG_exp takes grades below 1024); NDCG_exp@2 stays "
                       "finite and exact for any grade")
    assert isinstance(info.value, ValueError) and "\n" not in message  # the CLI's one-line error


def test_refused_even_when_the_run_misses_the_grade_so_every_run_on_these_qrels_is_refused():
    # 'high' is not retrieved: this run's DCG_exp@2 would be finite (1 + 0), but another run's would not.
    qrels = Qrels.from_dict({"q": {"low": 1, "high": 1100}})
    with pytest.raises(GainOverflow, match="document 'high', qrels grade 1100"):
        Evaluator(["DCG_exp@2"]).evaluate(RUN, qrels)


def test_grades_near_1023_whose_discounted_sum_overflows_are_refused():
    # Each gain 2^1023 - 1 is finite (8.99e307); at k = 3: g (1 + 1/log2 3 + 1/2) = 1.91e308 > 1.80e308.
    run = Run.from_dict({"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    qrels = Qrels.from_dict({"q": {"a": 1023, "b": 1023, "c": 1023}})
    with pytest.raises(GainOverflow, match=r"query 'q', document 'a', qrels grade 1023: the query's gains "
                                           r"2\^grade - 1, discounted, sum past the largest double"):
        Evaluator(["DCG_exp@3"]).evaluate(run, qrels)
    # At k = 2 the sum, g (1 + 1/log2 3) = 1.46e308, is a double: the value, not an error.
    value = Evaluator(["DCG_exp@2"]).evaluate(run, qrels).values["DCG_exp@2"][0]
    g = Fraction(2**1023 - 1)
    assert math.isfinite(value) and value == pytest.approx(float(g + g / Fraction(math.log2(3))), rel=1e-15)


def test_trec_gains_near_the_largest_double_are_refused_too():
    run = Run.from_dict({"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    qrels = Qrels.from_dict({"q": {"a": 1e308, "b": 1e308, "c": 1e308}})  # 1e308 (1 + 0.63 + 0.5): past it
    with pytest.raises(GainOverflow, match=r"DCG@10 would be infinite: query 'q', document 'a', qrels grade "
                                           r"1e\+308: the query's discounted grades sum past the largest double"):
        Evaluator(["DCG@10"]).evaluate(run, qrels)


def test_grades_up_to_1023_give_the_exact_value():
    # 2^1023 - 1 at rank 1 of 'q' (log2 2 = 1): exactly 2^1023 in double; 'p' retrieves its only grade, 1.
    qrels = Qrels.from_dict({"q": {"low": 1023}, "p": {"x": 1}})
    values = Evaluator(["DCG_exp@2"]).evaluate(RUN, qrels).per_query()
    assert values == {"q": {"DCG_exp@2": float(2**1023 - 1)}, "p": {"DCG_exp@2": 1.0}}


def test_the_metric_called_without_the_evaluator_names_query_and_grade():
    from harness.evaluation.judgments import judge

    j = judge(RUN, Qrels.from_dict({"q": {"low": 2000}}))
    with pytest.raises(GainOverflow, match=r"^DCG_exp@1 would be infinite: query 'q', qrels grade 2000: its gain"):
        DCG(1, "exp")(j)


def test_cli_evaluate_exits_2_with_one_line_and_writes_no_metrics_json(tmp_path, harness_cli):
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq\thigh\t1100\nq\tlow\t1\n")
    (tmp_path / "run.trec").write_text("q Q0 low 1 2.0 t\nq Q0 high 2 1.0 t\n")
    out = tmp_path / "metrics.json"
    result = harness_cli("evaluate", "--qrels", tmp_path / "qrels.tsv", "--run", tmp_path / "run.trec",
                         "-m", "DCG_exp@10", "--json", out)
    assert result.returncode == 2 and not out.exists()
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "query 'q', document 'high', qrels grade 1100" in errors[0], result.stderr
    # NDCG_exp on the same qrels is finite, and the file is strict JSON.
    assert harness_cli("evaluate", "--qrels", tmp_path / "qrels.tsv", "--run", tmp_path / "run.trec",
                       "-m", "NDCG_exp@10", "--json", out).returncode == 0
    json.loads(out.read_text(), parse_constant=lambda name: pytest.fail(f"{name} in metrics.json"))


def test_the_mean_of_values_near_2_to_the_1023_is_finite_and_exact(tmp_path, harness_cli):
    # Two queries with DCG_exp@1 = 2^1023 - 1 (= 2^1023 in double): their sum is 2^1024 = inf in double,
    # so numpy's mean was inf and metrics.json's "metrics" held Infinity; the mean is 2^1023.
    from harness.evaluation.evaluator import finite_mean

    run = Run.from_dict({"q": {"a": 1.0}, "p": {"b": 1.0}})
    result = Evaluator(["DCG_exp@1"]).evaluate(run, Qrels.from_dict({"q": {"a": 1023}, "p": {"b": 1023}}))
    assert result.means == {"DCG_exp@1": 2.0**1023}
    assert finite_mean(result.values["DCG_exp@1"][:0]) == 0.0  # no query: 0, as before
    (tmp_path / "qrels.txt").write_text("q 0 a 1023\np 0 b 1023\n")
    (tmp_path / "run.trec").write_text("q Q0 a 1 1.0 t\np Q0 b 1 1.0 t\n")
    out = tmp_path / "metrics.json"
    assert harness_cli("evaluate", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                       "-m", "DCG_exp@1", "--json", out).returncode == 0
    document = json.loads(out.read_text(), parse_constant=lambda name: pytest.fail(f"{name} in metrics.json"))
    assert document["metrics"]["DCG_exp@1"] == 2.0**1023
