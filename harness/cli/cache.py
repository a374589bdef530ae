"""``harness cache dir | info | purge KIND... | purge --all``: where the caches are, what they hold, removing them."""

from __future__ import annotations

from typing import List, Optional

import typer

from harness.cli import app as _main_app

app = typer.Typer(no_args_is_help=True, help="Show and remove the harness's caches (downloaded datasets, parsed "
                  "corpora, indexes, embeddings, pipeline runs) under $HARNESS_CACHE_DIR.")
_main_app.add_typer(app, name="cache")


def _root_folder():
    """The cache root, refused with one line when it is there but no folder ($HARNESS_CACHE_DIR naming a file:
    every kind read as empty, and purge had nothing to remove)."""
    from harness.cache import ENV_VAR, cache_root
    from harness.errors import HarnessError

    root = cache_root()
    if root.exists() and not root.is_dir():
        raise HarnessError(f"cache root {root} is not a folder (${ENV_VAR} names it)")
    return root


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


@app.command("dir")
def cache_dir_command() -> None:
    """Print the cache root: $HARNESS_CACHE_DIR, else the user cache dir."""
    from harness.cache import cache_root

    typer.echo(str(cache_root()))


@app.command("info")
def info() -> None:
    """Each kind of cache: its folder, entries and size on disk (apparent bytes of its files)."""
    from rich.table import Table

    from harness.cache import KINDS, usage
    from harness.cli.display import print_table

    table = Table(title=f"harness caches (root: {_root_folder()})")
    for column in ("kind", "entries", "size", "holds"):
        table.add_column(column, justify="right" if column in ("entries", "size") else "left")
    total = 0
    for kind, holds in KINDS.items():
        held = usage(kind)
        total += held.bytes
        table.add_row(kind, f"{held.entries:,}", _size(held.bytes), holds)
    table.add_row("total", "", _size(total), "")
    print_table(table)


@app.command("purge")
def purge_command(
    kinds: Optional[List[str]] = typer.Argument(None, metavar="[KIND]...", help="Kinds to remove (see `harness "
                                                "cache info`)."),
    every: bool = typer.Option(False, "--all", help="Remove every kind (the root folder itself stays)."),
) -> None:
    """Remove the named kinds of cache (everything in <root>/<kind>/); the next run rebuilds what it needs.
    Run it while no harness process uses the cache."""
    from harness.cache import KINDS, _known, purge
    from harness.errors import HarnessError

    if every and kinds:
        raise HarnessError("give kinds or --all, not both")
    if not every and not kinds:
        raise HarnessError(f"name the kinds to remove ({', '.join(KINDS)}) or give --all")
    chosen = list(KINDS) if every else list(dict.fromkeys(_known(k) for k in kinds))
    _root_folder()
    for kind in chosen:
        held = purge(kind)
        typer.echo(f"{kind}: removed {held.folder} ({held.entries:,} entries, {_size(held.bytes)})" if held.entries
                   or held.bytes else f"{kind}: nothing to remove ({held.folder})")
