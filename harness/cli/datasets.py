"""``harness datasets list | download NAME | info NAME``: the BEIR registry and the download cache."""

from __future__ import annotations

from typing import Optional

import typer

from harness.cli import app as _main_app

app = typer.Typer(no_args_is_help=True, help="List, download and describe BEIR datasets (cached locally).")
_main_app.add_typer(app, name="datasets")


def _count(n: int | None) -> str:
    return f"{n:,}" if n is not None else "?"


def _refuse_remote(ref, command: str) -> None:
    """An ``irds:`` or ``hf:`` source has no BEIR zip to download or registry entry to describe: one line
    saying where it comes from (each load fetches it), not "unknown dataset" or a folder-name rule."""
    from harness.errors import HarnessError

    if ref.remote == "irds":
        raise HarnessError(f"{ref.text}: an ir_datasets id, fetched by ir_datasets into $IR_DATASETS_HOME when it is "
                           f"first loaded (`harness run -d {ref.text}`); `harness datasets {command}` covers "
                           "BEIR's registered datasets (docs/datasets.md)")
    if ref.remote == "hf":
        raise HarnessError(f"{ref.text}: a Hugging Face dataset, fetched by the datasets library into its cache when "
                           f"it is first loaded (`harness run -d {ref.text}`); `harness datasets {command}` covers "
                           "BEIR's registered datasets (docs/datasets.md)")


@app.command("list")
def list_datasets() -> None:
    """The registered BEIR datasets, their sizes and whether they are downloaded."""
    from rich.table import Table

    from harness.cli.display import print_table
    from harness.datasets import bundled_names
    from harness.datasets import download as dl
    from harness.datasets import registry

    table = Table(title=f"BEIR datasets (cache: {dl.datasets_root()})")
    for column in ("name", "documents", "test queries", "splits", "license", "local"):
        table.add_column(column, justify="right" if column in ("documents", "test queries") else "left")
    bundled = set(bundled_names())
    for info in registry.all_datasets():
        local = "downloaded" if dl.is_downloaded(info.name) else ("bundled" if info.name in bundled else "")
        table.add_row(info.name, _count(info.corpus_docs), _count(info.queries), ",".join(info.splits),
                      info.license or "unknown", local)
        for forum, sizes in info.subsets.items():
            table.add_row(f"  {info.name}/{forum}", _count(sizes.get("corpus_docs")), _count(sizes.get("queries")),
                          "", "", "")
    print_table(table)


@app.command()
def download(
    name: str = typer.Argument(..., help="Registered name (e.g. nfcorpus, cqadupstack), or a new name with --url."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help="Base URL holding <name>.zip files "
                                         "(default: $HARNESS_BEIR_MIRROR, else BEIR's server)."),
    url: Optional[str] = typer.Option(None, "--url", help="Fetch this zip instead (needs --sha256)."),
    sha256: Optional[str] = typer.Option(None, "--sha256", help="Expected sha256 of the --url zip."),
    force: bool = typer.Option(False, "--force", help="Download and unpack again even if present."),
    keep_zip: bool = typer.Option(False, "--keep-zip", help="Keep the verified zip beside the unpacked folder."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Download NAME's zip (checksum-verified, resumable) and unpack it into the cache."""
    from harness.datasets import DatasetRef
    from harness.datasets import download as dl
    from harness.errors import HarnessError

    if url is not None and mirror is not None:  # (the zip came from --url; the mirror was ignored)
        raise HarnessError("--mirror does not apply with --url (the zip is fetched from the --url given)")
    _refuse_remote(DatasetRef.parse(name), "download")
    folder = dl.download(DatasetRef.parse(name), mirror=mirror, url=url, sha256=sha256, force=force, keep_zip=keep_zip,
                         progressbar=progress)
    typer.echo(f"{name}: {folder}")


@app.command()
def info(name: str = typer.Argument(..., help="A registered dataset name.")) -> None:
    """What the registry says about NAME, and what is in the cache."""
    from harness.datasets import DatasetRef
    from harness.datasets import download as dl
    from harness.errors import HarnessError

    ref = DatasetRef.parse(name)
    _refuse_remote(ref, "info")
    entry = ref.info
    downloaded = dl.is_downloaded(ref)
    if entry is None and not downloaded:
        raise HarnessError(f"unknown dataset {name!r} (see `harness datasets list`)")
    lines = [f"name: {name}"]
    if entry is not None:
        subset, sizes = ref.subset, ref.sizes
        lines += [
            f"title: {entry.title}" + (f" ({subset} forum)" if subset else ""),
            f"url: {entry.url(dl.mirror_url())}",
            f"md5 (published by BEIR): {entry.md5 or 'none published'}",
            f"splits: {', '.join(entry.splits)} (evaluation split: {entry.eval_split})",
            f"documents: {_count(sizes.get('corpus_docs'))}; {entry.eval_split} queries: {_count(sizes.get('queries'))}",
            f"license: {entry.license or 'unknown'} ({entry.license_source})",
            f"hugging face: hf:{entry.hf_repo} (qrels: {entry.hf_repo}-qrels)",
        ]
        if entry.subsets and not subset:
            lines.append(f"forums: {', '.join(f'{entry.name}/{f}' for f in entry.subsets)}")
    folder = dl.dataset_dir(ref)
    if downloaded:
        qrels = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        lines.append(f"local: {folder} (qrels: {', '.join(qrels) or 'none'})")
        manifest = dl.manifest(ref)
        if manifest:
            lines.append(f"downloaded: {manifest['downloaded_at']} from {manifest['url']}, {manifest['bytes']:,} bytes, "
                         f"sha256 {manifest['sha256']}")
    else:
        lines.append(f"local: not downloaded (`harness datasets download {name}` puts it in {folder})")
    typer.echo("\n".join(lines))
