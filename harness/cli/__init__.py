"""The ``harness`` command line (typer). Each command lives in its own module."""

from __future__ import annotations

import sys

import typer

from harness.errors import HarnessError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark search: run retrievers on BEIR datasets, evaluate runs, compare and gate.")


def _register() -> None:
    from harness.cli import datasets, evaluate, run  # noqa: F401  (each module adds its command to ``app``)
    from harness.cli import check, compare  # noqa: F401
    from harness.cli import bench  # noqa: F401
    from harness.cli import serve  # noqa: F401
    from harness.cli import report  # noqa: F401
    from harness.cli import fuse  # noqa: F401
    from harness.cli import rerank  # noqa: F401


def main() -> None:
    """Entry point: user mistakes print one line and exit 2; usage errors are click's (exit 2)."""
    _register()
    try:
        app()
    except (HarnessError, ValueError) as exc:  # ValueError: option values refused by the core
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
