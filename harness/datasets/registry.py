"""The registry of public BEIR datasets (data in ``registry.json`` beside this module).

Each entry says where BEIR publishes the dataset's zip, the md5 BEIR publishes for it, its splits,
its size (corpus documents, test queries) and its license as far as known. CQADupStack is one zip
holding twelve forums; a forum is named ``cqadupstack/<forum>`` (or ``cqadupstack-<forum>``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REGISTRY_FILE = Path(__file__).with_name("registry.json")


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    title: str
    md5: str | None
    splits: tuple[str, ...]
    corpus_docs: int | None
    queries: int | None
    license: str | None
    license_source: str
    base_url: str
    eval_split: str = "test"
    subsets: dict = field(default_factory=dict)  # forum -> {"corpus_docs", "queries"}
    license_note: str | None = None  # a caveat shown with the license (another source lists other terms)

    def url(self, mirror: str | None = None) -> str:
        """The zip's URL at BEIR, or at ``mirror`` (a base URL holding ``<name>.zip`` files)."""
        return f"{(mirror or self.base_url).rstrip('/')}/{self.name}.zip"

    @property
    def known_hash(self) -> str | None:
        """pooch's form of the published checksum (``md5:<hex>``), None when none is published."""
        return f"md5:{self.md5}" if self.md5 else None

    @property
    def hf_repo(self) -> str:
        return f"BeIR/{self.name}"


@lru_cache(maxsize=1)
def _load() -> dict[str, DatasetInfo]:
    data = json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))
    base = data["base_url"]
    out = {}
    for name, entry in data["datasets"].items():
        out[name] = DatasetInfo(
            name=name, title=entry["title"], md5=entry.get("md5"), splits=tuple(entry["splits"]),
            corpus_docs=entry.get("corpus_docs"), queries=entry.get("queries"), license=entry.get("license"),
            license_source=entry.get("license_source", ""), base_url=base,
            eval_split=entry.get("eval_split", "test"), subsets=entry.get("subsets", {}),
            license_note=entry.get("license_note"))
    return out


def names() -> list[str]:
    return list(_load())


def all_datasets() -> list[DatasetInfo]:
    return list(_load().values())


def lookup(name: str) -> DatasetInfo | None:
    """The registry entry of a registered name (a base name: ``cqadupstack``, not a forum)."""
    return _load().get(name)


def unknown_forum(text: str) -> str | None:
    """For ``<dataset>/<forum>`` (or ``<dataset>-<forum>``) naming a registered dataset of forums and a forum
    it lacks, the one line saying so (the forums it has); else None."""
    registry = _load()
    for sep in ("/", "-"):
        head, _, tail = text.partition(sep)
        if tail and head in registry and registry[head].subsets and tail not in registry[head].subsets:
            return f"{text!r}: {head} has no forum {tail!r} (forums: {', '.join(registry[head].subsets)})"
    return None


def forum_of(source: str) -> tuple[str, str] | None:
    """(dataset, forum) when ``source`` names a forum of a registered dataset of forums
    (``cqadupstack/android`` -> ``("cqadupstack", "android")``), else None. BEIR reports such a dataset as
    one: each forum evaluated on its own, the dataset's value the unweighted mean of its forums' values
    (:func:`forum_mean`)."""
    ref = DatasetRef.parse(source)
    if ref.remote is None and ref.info is not None and ref.subset is not None:
        return ref.base, ref.subset
    return None


def forum_mean(values: list) -> float | None:
    """A dataset of forums' value: the unweighted mean of its forums' values, given only when every forum
    has one (``values`` holds one value or None per forum; an average over fewer forums is not BEIR's)."""
    if not values or any(v is None for v in values):
        return None
    from harness.evaluation.mean import exact_mean  # (the same whatever the forums' order)
    return exact_mean(values)


HF_PREFIX = "hf:"
IRDS_PREFIX = "irds:"


@dataclass(frozen=True)
class DatasetRef:
    """A dataset as the user named it, parsed once (:meth:`parse`) and passed on as this value.

    ``text`` is what was given: a folder path, a registered or downloaded name, ``hf:<repo>`` or
    ``irds:<ir_datasets id>``; a registered name with a trailing slash (``msmarco/``) is that name.
    ``base`` is the name the download cache and the registry know, ``subset`` the CQADupStack forum
    (``cqadupstack/android`` or ``cqadupstack-android`` -> ``cqadupstack`` + ``android``), ``info``
    the registry entry of ``base`` (None when the registry does not know it). Whether ``text`` is a
    folder is asked of the file system when the dataset is resolved, not here.
    """

    text: str
    base: str
    subset: str | None = None
    info: DatasetInfo | None = None

    @classmethod
    def parse(cls, dataset: "str | os.PathLike | DatasetRef") -> "DatasetRef":
        if isinstance(dataset, DatasetRef):
            return dataset
        if isinstance(dataset, os.PathLike):  # a folder as a Path (it failed: no attribute 'partition')
            dataset = os.fspath(dataset)
        if not isinstance(dataset, str):  # (an int, None, bytes: "'int' object has no attribute 'rstrip'")
            raise TypeError(f"a dataset is a name or a folder path (a str or a Path), got "
                            f"{type(dataset).__name__} {dataset!r:.60}")
        registry = _load()
        bare = dataset.rstrip("/" + os.sep)
        if bare and bare != dataset and cls.parse(bare).info is not None:
            dataset = bare  # "msmarco/" is msmarco (it was an unregistered name: split test, named "msmarco/")
        if dataset in registry:
            return cls(dataset, dataset, None, registry[dataset])
        for sep in ("/", "-"):
            head, _, tail = dataset.partition(sep)
            if tail and head in registry and tail in registry[head].subsets:
                return cls(dataset, head, tail, registry[head])
        return cls(dataset, dataset)

    @property
    def hf_repo(self) -> str | None:
        """``<repo>`` of ``hf:<repo>``, else None."""
        return self.text[len(HF_PREFIX):] if self.text.startswith(HF_PREFIX) else None

    @property
    def irds_id(self) -> str | None:
        """``<id>`` of ``irds:<id>`` (an ir_datasets id such as ``beir/trec-covid``), else None."""
        return self.text[len(IRDS_PREFIX):] if self.text.startswith(IRDS_PREFIX) else None

    @property
    def remote(self) -> str | None:
        """The source kind of a dataset that has no local folder (``hf`` or ``irds``), else None."""
        return "hf" if self.hf_repo is not None else "irds" if self.irds_id is not None else None

    @property
    def all_forums(self) -> bool:
        """Whether this names a registered dataset of forums whole (``cqadupstack``), not one of its forums
        (``cqadupstack/android``): BEIR's one dataset, each forum a dataset of its own here."""
        return self.remote is None and self.info is not None and bool(self.info.subsets) and self.subset is None

    @property
    def sizes(self) -> dict:
        """The registry's ``corpus_docs`` and ``queries`` of this dataset (of the forum for a subset)."""
        if self.info is None:
            return {}
        if self.subset:
            return self.info.subsets.get(self.subset, {})
        return {"corpus_docs": self.info.corpus_docs, "queries": self.info.queries}
