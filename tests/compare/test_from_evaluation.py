"""Two EvaluationResults of this process compared without writing result folders (ranx's ``compare`` of runs):
``SystemResult.from_evaluation`` -> ``align`` -> ``compare``. Worked example: 6 queries, each with one relevant
document "a"; the baseline ranks it second everywhere (RR 1/2), the new system first on 4 queries (RR 1) and
second on 2: differences (+1/2 x 4, 0 x 2), mean +1/3.
- paired t-test: t = (1/3) / (sd / sqrt 6) with sd = sqrt(1/15) -> t = 3.1623, p = 0.0250310 (scipy.stats.ttest_rel);
- randomization test, exact over the 2^4 sign flips of the 4 non-zero differences: only all-plus and all-minus
  reach |mean| >= 1/3, p = 2/16 = 0.125."""

from __future__ import annotations

import pytest

from harness import Qrels, Run, evaluate
from harness.compare import Settings, SystemResult, align, compare
from harness.errors import HarnessError

QRELS = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(6)})
BASE = {f"q{i}": {"a": 1.0, "b": 2.0} for i in range(6)}
NEW = {f"q{i}": {"a": 3.0 if i < 4 else 1.0, "b": 2.0} for i in range(6)}


def _systems(**options):
    return [SystemResult.from_evaluation("base", evaluate(Run.from_dict(BASE), QRELS, ["MRR@10"])),
            SystemResult.from_evaluation("new", evaluate(Run.from_dict(NEW), QRELS, ["MRR@10"], **options))]


@pytest.mark.parametrize("test, p", [("t", 0.02503101581845296), ("randomization", 0.125)])
def test_two_results_of_this_process_compare_as_two_result_folders(test, p):
    comparison = compare(align(_systems(), ["MRR@10"]), baseline="base", settings=Settings(test=test))
    cell = comparison.cells[("new", "MRR@10")]
    assert comparison.means == {"base": {"MRR@10": 0.5}, "new": {"MRR@10": pytest.approx(5 / 6, abs=1e-15)}}
    assert (cell.stats.wins, cell.stats.ties, cell.stats.losses) == (4, 2, 0)
    assert cell.p_value == pytest.approx(p, abs=1e-12)
    assert cell.significant is (p < 0.05)


def test_results_of_two_semantics_are_not_compared():
    with pytest.raises(HarnessError, match="new was evaluated under trec_eval-10 semantics but base under trec_eval-9"):
        align(_systems(semantics="trec_eval-10"), ["MRR@10"])


def test_a_name_is_required():
    with pytest.raises(TypeError, match="non-empty str"):
        SystemResult.from_evaluation("", evaluate(Run.from_dict(BASE), QRELS, ["MRR@10"]))
