"""Compare systems and gate regressions.

    load (result folders, metrics.json, run + qrels) -> align on queries -> significance per
    (system, metric) against a baseline -> table / JSON / plots;  check -> verdicts and exit code
"""

from harness.compare.analysis import Comparison, Settings, compare
from harness.compare.check import CheckResult, run_check, verdict
from harness.compare.load import Aligned, SystemResult, align, load_system, read_metrics_json

__all__ = ["Aligned", "SystemResult", "align", "load_system", "read_metrics_json", "Comparison", "Settings",
           "compare", "CheckResult", "run_check", "verdict"]
