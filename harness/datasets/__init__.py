"""Datasets: corpus, queries and qrels, loaded from a folder or by name.

A name is looked up in order: a folder path, a dataset bundled with the package, a dataset
downloaded into the cache (``harness datasets download NAME``). ``hf:<repo>`` loads from the
Hugging Face hub instead (see :mod:`harness.datasets.hf`).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.datasets.beir import load_beir_folder
from harness.datasets.corpus import ArrowCorpus, Corpus, Dataset, Queries
from harness.errors import HarnessError

BUNDLED = Path(__file__).parent / "bundled"
DEFAULT_DATASET = "scifact"
AUTO_DOWNLOAD_ENV = "HARNESS_AUTO_DOWNLOAD"
HF_PREFIX = "hf:"


def bundled_names() -> list[str]:
    return sorted(p.name for p in BUNDLED.iterdir() if p.is_dir())


def _auto_download() -> bool:
    return os.environ.get(AUTO_DOWNLOAD_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def resolve(name_or_path: str, download: bool | None = None, split: str | None = None) -> tuple[str, Path]:
    """Map a dataset name or folder path to (name, folder).

    Order: an existing folder; a bundled dataset (skipped when it lacks the qrels of ``split`` and
    the cache has them); a dataset in the download cache; a registered BEIR dataset not downloaded
    yet, which is downloaded when ``download`` is true (default: ``$HARNESS_AUTO_DOWNLOAD``) and
    otherwise named in an error that says how to fetch it.
    """
    from harness.datasets import download as dl
    from harness.datasets import registry

    if name_or_path.startswith(HF_PREFIX):
        raise HarnessError(f"{name_or_path!r} is a Hugging Face hub dataset and has no local folder; "
                           "load it with harness.datasets.load_dataset")
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path.resolve().name, path
    name = name_or_path
    cached = dl.dataset_dir(name) if dl.is_downloaded(name) else None
    bundled = BUNDLED / name
    if bundled.is_dir() and (split is None or (bundled / "qrels" / f"{split}.tsv").is_file() or cached is None):
        return name, bundled
    if cached is not None:
        return name, cached
    if registry.lookup(name) is not None:
        if download if download is not None else _auto_download():
            return name, dl.download(name, progressbar=True)
        raise HarnessError(
            f"dataset {name!r} is not downloaded yet: run `harness datasets download {name}` "
            f"(or set {AUTO_DOWNLOAD_ENV}=1, or pass download=True); it goes to {dl.dataset_dir(name)}")
    raise HarnessError(
        f"unknown dataset {name!r}: not a folder, not bundled ({', '.join(bundled_names())}), not downloaded, "
        f"and not a registered BEIR dataset (see `harness datasets list`)")


def load_dataset(name_or_path: str = DEFAULT_DATASET, split: str = "test", download: bool | None = None) -> Dataset:
    """Load a test collection by folder, name or ``hf:<repo>`` (e.g. ``hf:BeIR/nfcorpus``)."""
    if name_or_path.startswith(HF_PREFIX):
        from harness.datasets.hf import load_hf_dataset

        return load_hf_dataset(name_or_path[len(HF_PREFIX):], split=split)
    name, folder = resolve(name_or_path, download=download, split=split)
    return load_beir_folder(folder, split=split, name=name)


__all__ = ["ArrowCorpus", "Corpus", "Dataset", "Queries", "load_dataset", "resolve", "DEFAULT_DATASET"]
