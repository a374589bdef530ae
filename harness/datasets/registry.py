"""The registry of public BEIR datasets (data in ``registry.json`` beside this module).

Each entry says where BEIR publishes the dataset's zip, the md5 BEIR publishes for it, its splits,
its size (corpus documents, test queries) and its license as far as known. CQADupStack is one zip
holding twelve forums; a forum is named ``cqadupstack/<forum>`` (or ``cqadupstack-<forum>``).
"""

from __future__ import annotations

import json
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
            eval_split=entry.get("eval_split", "test"), subsets=entry.get("subsets", {}))
    return out


def names() -> list[str]:
    return list(_load())


def all_datasets() -> list[DatasetInfo]:
    return list(_load().values())


def split_name(name: str) -> tuple[str, str | None]:
    """``cqadupstack/android`` or ``cqadupstack-android`` -> (``cqadupstack``, ``android``); else (name, None)."""
    registry = _load()
    if name in registry:
        return name, None
    for sep in ("/", "-"):
        head, _, tail = name.partition(sep)
        if tail and head in registry and tail in registry[head].subsets:
            return head, tail
    return name, None


def lookup(name: str) -> DatasetInfo | None:
    """The registry entry for a dataset (or for the dataset holding a subset), None when unknown."""
    return _load().get(split_name(name)[0])
