"""Reports: metrics.json, metrics.md, per_query.jsonl and run.trec for one evaluated run."""

from harness.reports.document import SCHEMA, MetricsDocument
from harness.reports.markdown import metrics_table
from harness.reports.writer import write_result_folder

__all__ = ["SCHEMA", "MetricsDocument", "metrics_table", "write_result_folder"]
