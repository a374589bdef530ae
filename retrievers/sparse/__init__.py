"""Learned sparse retrieval on the inverted index: precomputed impacts (``impacts``) and
sentence-transformers SparseEncoder models (``sparse``). See docs/sparse.md."""
