"""Datasets: corpus, queries and qrels, loaded from a folder or by name.

A name is looked up in order: a folder path, a dataset bundled with the package, a dataset
downloaded into the cache (``harness datasets download NAME``). ``hf:<repo>`` loads from the
Hugging Face hub instead (see :mod:`harness.datasets.hf`), ``irds:<id>`` through the ir_datasets
package (see :mod:`harness.datasets.irds`).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from harness.datasets.beir import load_beir_folder
from harness.datasets.corpus import ArrowCorpus, Corpus, Dataset, Queries
from harness.datasets.registry import DatasetRef
from harness.errors import HarnessError
from harness.versions import reused_versions_warning

BUNDLED = Path(__file__).parent / "bundled"
DEFAULT_DATASET = "scifact"
AUTO_DOWNLOAD_ENV = "HARNESS_AUTO_DOWNLOAD"


def bundled_names() -> list[str]:
    return sorted(p.name for p in BUNDLED.iterdir() if p.is_dir())


def _auto_download() -> bool:
    return os.environ.get(AUTO_DOWNLOAD_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def resolve(dataset: str | DatasetRef, download: bool | None = None, split: str | None = None) -> tuple[str, Path]:
    """Map a dataset (name, folder path or :class:`DatasetRef`) to (name, folder).

    Order: an existing folder; a bundled dataset (skipped when it lacks the qrels of ``split`` and
    the cache has them); a dataset in the download cache; a registered BEIR dataset not downloaded
    yet, which is downloaded when ``download`` is true (default: ``$HARNESS_AUTO_DOWNLOAD``) and
    otherwise named in an error that says how to fetch it.
    """
    from harness.datasets import download as dl

    ref = DatasetRef.parse(dataset)
    if ref.remote is not None:
        what = "a Hugging Face hub" if ref.remote == "hf" else "an ir_datasets"
        raise HarnessError(f"{ref.text!r} is {what} dataset and has no local folder; "
                           "load it with harness.datasets.load_dataset")
    if not ref.text.strip():  # Path("") is the working folder
        raise HarnessError(f"no dataset named ({ref.text!r}): give a folder, a name, hf:<repo> or irds:<id>")
    path = Path(os.path.expanduser(ref.text))
    if path.is_dir():
        return path.resolve().name, path
    name = ref.text
    cached = dl.dataset_dir(ref) if dl.is_downloaded(ref) else None
    bundled = BUNDLED / name
    if bundled.is_dir() and (split is None or (bundled / "qrels" / f"{split}.tsv").is_file() or cached is None):
        return name, bundled
    if cached is not None:
        return name, cached
    if ref.info is not None:
        if download if download is not None else _auto_download():
            return name, dl.download(ref, progressbar=True)
        raise HarnessError(
            f"dataset {name!r} is not downloaded yet: run `harness datasets download {name}` "
            f"(or set {AUTO_DOWNLOAD_ENV}=1, or pass download=True); it goes to {dl.dataset_dir(ref)}")
    from harness.datasets.registry import unknown_forum

    if unknown_forum(name):
        raise HarnessError(unknown_forum(name))
    raise HarnessError(
        f"unknown dataset {name!r}: not a folder, not bundled ({', '.join(bundled_names())}), not downloaded, "
        f"and not a registered BEIR dataset (see `harness datasets list`)")


def whole_of_forums(ref: DatasetRef) -> None:
    """A registered dataset of forums named whole (``cqadupstack``, no folder of that name here) is no dataset
    to load: refused saying how to load a forum and how BEIR's number for it is made (the unweighted mean of
    the forums' values, which ``harness bench`` gives as one row). It was "no corpus.jsonl ... in this
    dataset folder" once downloaded."""
    if not ref.all_forums or Path(os.path.expanduser(ref.text)).is_dir():
        return
    forums = list(ref.info.subsets)
    raise HarnessError(
        f"{ref.text!r} is {len(forums)} forums, each a dataset of its own: name one as {ref.base}/<forum> "
        f"({', '.join(forums)}); BEIR reports {ref.info.title} as the unweighted mean of the {len(forums)} forums' "
        f"values, which `harness bench` gives as one row for datasets = [\"{ref.base}\"] (docs/bench.md)")


def default_split(dataset: str | DatasetRef) -> str:
    """The split evaluated when none is named: the registry's evaluation split of a registered BEIR name
    (``dev`` for msmarco, whose ``test`` is TREC DL 2019's 43 queries, where BEIR reports dev), also when
    the name comes as BEIR's own copy on the hub or in ir_datasets (``hf:BeIR/msmarco``,
    ``irds:beir/msmarco``: the same dataset, the same split), else ``test``."""
    ref = DatasetRef.parse(dataset)
    if ref.remote is not None:
        prefix = "BeIR/" if ref.hf_repo is not None else "beir/"
        remote = ref.hf_repo if ref.hf_repo is not None else ref.irds_id
        if remote[:len(prefix)].lower() != prefix.lower():  # (hub ids are not case-sensitive)
            return "test"
        ref = DatasetRef.parse(remote[len(prefix):])
    return ref.info.eval_split if ref.info is not None else "test"


# How to parse again a corpus another pyarrow parsed (load_dataset's warning; versions are in no cache key)
REPARSE_HINT = "purge the corpora cache (harness cache purge corpora) to parse it again"


def load_dataset(dataset: str | os.PathLike | DatasetRef = DEFAULT_DATASET, split: str | None = None,
                 download: bool | None = None) -> Dataset:
    """Load a test collection by folder (a str or a Path), name, ``hf:<repo>`` (e.g. ``hf:BeIR/nfcorpus``) or
    ``irds:<id>`` (e.g. ``irds:beir/scifact/test``), for ``split`` (default: :func:`default_split`);
    the dataset's ``load_s`` records how long that took, a corpus cache hit included (metrics.json's
    ``timings.load_s``). A corpus mapped from a cache file that another pyarrow parsed (``Corpus.parsed_with``)
    adds one warning naming both versions (versions are in no cache key: docs/cache.md)."""
    started = time.perf_counter()
    ref = DatasetRef.parse(dataset)
    split = split if split is not None else default_split(ref)
    if ref.hf_repo is not None:
        from harness.datasets.hf import load_hf_dataset

        if not ref.hf_repo.strip():
            raise HarnessError(f"{ref.text!r} names no Hugging Face hub repo (e.g. hf:BeIR/nfcorpus)")
        loaded = load_hf_dataset(ref.hf_repo, split=split)
    elif ref.irds_id is not None:
        from harness.datasets.irds import load_irds_dataset

        loaded = load_irds_dataset(ref.irds_id, split=split)
    else:
        whole_of_forums(ref)
        name, folder = resolve(ref, download=download, split=split)
        loaded = load_beir_folder(folder, split=split, name=name)
        from harness.datasets import download as dl

        if not Path(os.path.expanduser(ref.text)).is_dir() and folder == dl.dataset_dir(ref):  # (read from the cache)
            dl.check_as_downloaded(ref, folder, loaded.files)
    load_s = time.perf_counter() - started
    reused = reused_versions_warning({"corpus_versions": loaded.corpus.parsed_with}, "dataset", REPARSE_HINT)
    return replace(loaded, load_s=load_s, warnings=[*loaded.warnings, *filter(None, [reused])])


__all__ = ["ArrowCorpus", "Corpus", "Dataset", "DatasetRef", "Queries", "load_dataset", "resolve", "DEFAULT_DATASET"]
