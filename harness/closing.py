"""Closing the components a command made (:meth:`Retriever.close <harness.retriever.Retriever.close>`,
:meth:`Reranker.close <harness.reranker.Reranker.close>`): each once, in order, after the work that used them;
an exception a ``close()`` raises is one warning naming the component (the results are written by then, and
a command's own error is not hidden behind it)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def close_components(components) -> None:
    """Call ``close()`` of each distinct object of ``components`` (a retriever reused by two stages is closed
    once); one that raises is a warning."""
    seen: set[int] = set()
    for component in components:
        if component is None or id(component) in seen:
            continue
        seen.add(id(component))
        close = getattr(component, "close", None)
        if not callable(close):
            continue
        try:
            close()
        except Exception as exc:  # noqa: BLE001 - a plugin's close() may raise anything: one line
            lines = str(exc).strip().splitlines()
            reason = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
            log.warning("%r: close() failed (%s)", getattr(component, "name", type(component).__name__), reason)
