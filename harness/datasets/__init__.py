"""Datasets: corpus, queries and qrels, loaded from a folder or by name."""

from __future__ import annotations

from pathlib import Path

from harness.datasets.beir import load_beir_folder
from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.errors import HarnessError

BUNDLED = Path(__file__).parent / "bundled"
DEFAULT_DATASET = "scifact"


def bundled_names() -> list[str]:
    return sorted(p.name for p in BUNDLED.iterdir() if p.is_dir())


def resolve(name_or_path: str) -> tuple[str, Path]:
    """Map a dataset name or folder path to (name, folder)."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path.resolve().name, path
    if (BUNDLED / name_or_path).is_dir():
        return name_or_path, BUNDLED / name_or_path
    raise HarnessError(
        f"unknown dataset {name_or_path!r}: not a folder, and not a bundled dataset ({', '.join(bundled_names())})")


def load_dataset(name_or_path: str = DEFAULT_DATASET, split: str = "test") -> Dataset:
    name, folder = resolve(name_or_path)
    return load_beir_folder(folder, split=split, name=name)


__all__ = ["Corpus", "Dataset", "Queries", "load_dataset", "resolve", "DEFAULT_DATASET"]
