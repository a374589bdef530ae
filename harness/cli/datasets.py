"""``harness datasets list | download NAME | info NAME|FOLDER``: the BEIR registry, the download cache and
what a local dataset folder holds."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

import typer

from harness.cli import app as _main_app

app = typer.Typer(no_args_is_help=True, help="List, download and describe BEIR datasets (cached locally) and local "
                  "dataset folders.")
_main_app.add_typer(app, name="datasets")


def _count(n: int | None) -> str:
    return f"{n:,}" if isinstance(n, int) else "?"


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
    """The registered BEIR datasets, their sizes (documents; queries of the evaluation split, test but for
    msmarco's dev) and what is here: bundled with the package, downloaded (each of CQADupStack's forums too)."""
    from rich.table import Table

    from harness.cli.display import print_table
    from harness.datasets import bundled_names
    from harness.datasets import download as dl
    from harness.datasets import registry

    table = Table(title=f"BEIR datasets (cache: {dl.datasets_root()})")
    for column in ("name", "documents", "eval queries", "splits", "license", "local"):
        table.add_column(column, justify="right" if column in ("documents", "eval queries") else "left")
    bundled = set(bundled_names())
    notes = []
    for info in registry.all_datasets():
        # (the bundled copy is what a run reads; a downloaded one beside it, for the splits the bundled lacks)
        local = " + ".join(kind for kind, here in (("bundled", info.name in bundled),
                                                   ("downloaded", dl.is_downloaded(info.name))) if here)
        license = info.license or "unknown"
        if info.license_note:  # (another source lists other terms: marked, and said under the table)
            notes.append(f"{'*' * (len(notes) + 1)} {info.name}: {info.license_note}")
            license += "*" * len(notes)
        queries = _count(info.queries) + ("" if info.eval_split == "test" else f" ({info.eval_split})")  # (msmarco)
        table.add_row(info.name, _count(info.corpus_docs), queries, ",".join(info.splits), license, local)
        for forum, sizes in info.subsets.items():
            table.add_row(f"  {info.name}/{forum}", _count(sizes.get("corpus_docs")), _count(sizes.get("queries")),
                          "", "", "downloaded" if dl.is_downloaded(f"{info.name}/{forum}") else "")
    if notes:
        table.caption = "\n".join(notes + ["licenses are informational: check the original terms before use"])
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
def info(
    name: str = typer.Argument(..., help="A registered, bundled or downloaded dataset name, or a BEIR folder path."),
    counts: bool = typer.Option(True, "--counts/--no-counts", help="Count documents, queries and judgments per "
                                "split (reads the files; a large corpus through its Arrow cache)."),
) -> None:
    """What the registry says about NAME, and what its local folder holds: files, sizes, sha256 (checked
    against the folder's PROVENANCE.md or the download's DOWNLOAD.json: exit 1 on a mismatch), counts."""
    from harness.datasets import DatasetRef
    from harness.datasets import download as dl
    from harness.errors import HarnessError

    ref = DatasetRef.parse(name)
    _refuse_remote(ref, "info")
    entry = ref.info
    folder, kind = _local_folder(ref)
    if entry is None and folder is None:
        from harness.datasets.registry import unknown_forum

        if unknown_forum(name):
            raise HarnessError(unknown_forum(name))
        raise HarnessError(f"unknown dataset {name!r}: not a folder, not bundled, not downloaded, not registered "
                           "(see `harness datasets list`)")
    lines = [f"name: {ref.text}"]  # (as parsed: "msmarco/" is msmarco, as harness run records it)
    if entry is not None:
        subset, sizes = ref.subset, ref.sizes
        lines += [
            f"title: {entry.title}" + (f" ({subset} forum)" if subset else ""),
            f"url: {entry.url(dl.mirror_url())}",
            f"md5 (published by BEIR): {entry.md5 or 'none published'}",
            f"splits: {', '.join(entry.splits)} (evaluation split: {entry.eval_split})",
            f"documents: {_count(sizes.get('corpus_docs'))}; {entry.eval_split} queries: {_count(sizes.get('queries'))}",
            f"license: {entry.license or 'unknown'} ({entry.license_source})"
            + (f"; {entry.license_note}" if entry.license_note else ""),
            f"hugging face: hf:{entry.hf_repo} (qrels: {entry.hf_repo}-qrels)",
        ]
        if entry.subsets and not subset:
            lines.append(f"forums: {', '.join(f'{entry.name}/{f}' for f in entry.subsets)}")
    if folder is None:
        lines.append(f"local: not downloaded (`harness datasets download {ref.text}` puts it in {dl.dataset_dir(ref)})")
        typer.echo("\n".join(lines))
        return
    if entry is not None and entry.subsets and not ref.subset and kind == "downloaded":  # (one zip, a folder a forum)
        forums = [f for f in entry.subsets if (folder / f).is_dir()]
        lines.append(f"local ({kind}): {folder} (forums: {', '.join(forums) or 'none'}; "
                     f"`harness datasets info {entry.name}/FORUM` describes one)")
        typer.echo("\n".join(lines))
        return
    splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv") if p.is_file())
    lines.append(f"local ({kind}): {folder} (qrels: {', '.join(splits) or 'none'})")
    if kind.startswith("bundled") and dl.is_downloaded(ref):  # (resolve reads it for a split the bundled copy lacks)
        lines.append(f"also downloaded: {dl.dataset_dir(ref)} (read for a split the bundled copy has no qrels of)")
    recorded, source = {}, None
    if kind == "downloaded":
        manifest = dl.manifest(ref)
        if manifest:
            lines.append(f"downloaded: {manifest['downloaded_at']} from {manifest['url']}, {manifest['bytes']:,} bytes, "
                         f"sha256 {manifest['sha256']}")
            recorded = dl.recorded_files(ref, folder)
            source = dl.MANIFEST if recorded else None
    if not recorded and (folder / PROVENANCE).is_file():
        recorded, source = _provenance(folder / PROVENANCE), PROVENANCE
    local, mismatches = _folder_lines(folder, counts, recorded, source)
    typer.echo("\n".join(lines + local))
    if mismatches:
        raise typer.Exit(1)


PROVENANCE = "PROVENANCE.md"


def _local_folder(ref) -> tuple[Optional[Path], Optional[str]]:
    """The folder ``harness run -d NAME`` reads (:func:`harness.datasets.resolve`, nothing downloaded), and
    what it is ("folder", "bundled with the package", "downloaded"); (None, None) when there is none."""
    from harness.datasets import BUNDLED, resolve
    from harness.errors import HarnessError

    try:
        _, folder = resolve(ref, download=False)
    except HarnessError:
        return None, None
    if Path(os.path.expanduser(ref.text)).is_dir():
        return folder.resolve(), "folder"
    return folder, "bundled with the package" if folder == BUNDLED / ref.text else "downloaded"


def _provenance(path: Path) -> dict:
    """``{file: {"bytes", "sha256"}}`` from the ``| file | bytes | sha256 |`` rows of a PROVENANCE.md
    (rows whose first cell is not a bare relative path, such as ``corpus.jsonl (uncompressed content)``,
    are not files of the folder and are skipped)."""
    rows = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        match = _PROVENANCE_ROW.match(line)
        if match:
            rows[match.group(1)] = {"bytes": int(match.group(2).replace(",", "")), "sha256": match.group(3).lower()}
    return rows


_PROVENANCE_ROW = re.compile(r"\|\s*`?([^|\s`]+)`?\s*\|\s*([\d,]+)\s*\|\s*`?([0-9A-Fa-f]{64})`?\s*\|")


def _folder_lines(folder: Path, counts: bool, recorded: dict, source: Optional[str]) -> tuple[list[str], list[str]]:
    """The folder's files (bytes, sha256, checked against ``recorded`` from ``source``) and, with
    ``counts``, its documents, queries and each split's judgments, read by the loaders ``harness run``
    uses (a faulty file is the same one-line error). Returns (lines, mismatches)."""
    import numpy as np

    from harness.datasets.beir import assemble, load_corpus, load_qrels_tsv, load_queries
    from harness.datasets.corpus_cache import source_checksum

    corpus_path, queries_path = (_found(folder, stem, recorded) for stem in ("corpus.jsonl", "queries.jsonl"))
    qrels_paths = sorted(p for p in (folder / "qrels").glob("*.tsv") if p.is_file())
    files = [path for path in (corpus_path, queries_path, *qrels_paths) if path is not None]
    lines, mismatches = [], []
    for path in files:
        rel = path.relative_to(folder).as_posix()
        size, digest = path.stat().st_size, source_checksum(path)  # (remembered: the load below hashes none again)
        check = ""
        if rel in recorded:
            want = recorded[rel]
            if (want.get("bytes"), want.get("sha256")) == (size, digest):
                check = f" (matches {source})"
            else:
                check = f" (MISMATCH: {source} gives {_count(want.get('bytes'))} bytes, sha256 {want.get('sha256')})"
                mismatches.append(rel)
        lines.append(f"file {rel}: {size:,} bytes, sha256 {digest}{check}")
    for rel in sorted(set(recorded) - {p.relative_to(folder).as_posix() for p in files}):
        if not (folder / rel).is_file():
            lines.append(f"file {rel}: MISSING ({source} lists it)")
            mismatches.append(rel)
    if recorded:
        lines.append(f"checksums: {len(mismatches)} mismatch(es) against {source}" if mismatches
                     else f"checksums: every file {source} lists matches it")
    if counts and corpus_path is not None and queries_path is not None:
        corpus, queries = load_corpus(corpus_path), load_queries(queries_path)
        lines += [f"documents: {len(corpus):,}", f"queries: {len(queries):,} (all splits)"]
        for path in qrels_paths:
            qrels = load_qrels_tsv(path)
            dataset = assemble(folder.name, path.stem, corpus, queries, qrels, {})
            grades, number = np.unique(qrels.grades, return_counts=True)
            histogram = "; ".join(f"grade {_grade(g)}: {n:,}" for g, n in zip(grades.tolist(), number.tolist()))
            lines.append(f"split {path.stem}: {len(qrels.queries()):,} judged queries, {len(qrels):,} judgments "
                         f"({histogram})")
            lines += [f"split {path.stem}: warning: {w}" for w in dataset.warnings]
    return lines, mismatches


def _found(folder: Path, stem: str, recorded: dict) -> Optional[Path]:
    """:func:`~harness.datasets.beir.find_file`, or None when neither file is there but the recorded checksums list
    one (it is then shown MISSING, as a listed qrels file is: exit 1, not the loader's error)."""
    from harness.datasets.beir import find_file
    from harness.errors import InputError

    try:
        return find_file(folder, stem)
    except InputError:
        if any(name in recorded and not (folder / name).exists() for name in (stem, stem + ".gz")):
            return None
        raise


def _grade(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
