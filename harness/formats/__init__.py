"""File formats: TREC runs and qrels (BEIR's tsv qrels live in harness.datasets.beir)."""
