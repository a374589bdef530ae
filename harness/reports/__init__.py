"""Reports: metrics.json, metrics.md, per_query.jsonl and run.trec for one evaluated run."""

from harness.reports.document import SCHEMA, metrics_document
from harness.reports.markdown import metrics_table
from harness.reports.writer import write_result_folder

__all__ = ["SCHEMA", "metrics_document", "metrics_table", "write_result_folder"]
