"""Retrievers backed by search engines that teams already run: SQLite FTS5 (``sqlite``) and
PostgreSQL full-text search (``postgres``). Registered through the ``retrieval_harness.retrievers``
entry points in pyproject.toml; see docs/engines.md."""
