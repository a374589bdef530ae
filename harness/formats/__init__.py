"""File formats: TREC runs, qrels and topics (BEIR's tsv qrels live in harness.datasets.beir)."""
