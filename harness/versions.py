"""Versions of the project, Python and key libraries, read from package metadata (no imports), and the
identity of the code that computes a result's numbers (:func:`recorded`, metrics.json's ``versions``).

:data:`NUMBERS_VERSION` and :data:`RUNS_VERSION` are bumped by hand, in the change that moves numbers:
the release version (``harness.__version__``) is not bumped per change, so two builds of 0.1.0 can
compute different values for the same run (NDCG_exp of grades below 1 was 0.0 for 1.0 before 9be498f).
A test keeps the bump from being forgotten: tests/numbers_digest.json records a digest of the code that
computes runs and numbers with these two versions, and tests/test_numbers_digest.py fails on a change
to that code until it is recorded again (``python tests/numbers_digest.py --write``), with a bump or,
for a change that moves no number, without one.
"""

from __future__ import annotations

import json
import platform
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import harness

# What a result's numbers depend on: numpy (every metric), pyarrow (parses every corpus and, where the compiled
# reader is not built, every run), regex (the standard tokenizer's Unicode word breaks, the default BM25's
# tokens of non-ASCII text), the retrievers' libraries, datasets (hf: corpora), ir_datasets (irds: corpora,
# queries and qrels read through its catalogue).
LIBRARIES = ("numpy", "pyarrow", "regex", "rank-bm25", "bm25s", "PyStemmer", "sentence-transformers", "torch",
             "transformers", "faiss-cpu", "datasets", "ir_datasets")

# Bumped whenever a change of the code moves a result's numbers (a retriever's run, a metric), as the release
# version is not bumped per change. Recorded in every metrics.json (``versions.numbers_version``), where
# compare and check warn when two results differ in it, and by every bench cell (``bench.numbers``), which is
# run again when it records another. 2: the first; results before it record none, and they include cells of
# rank-bm25 with k1 = 0 (NDCG@10 0.1 where 0.85 is right, fixed in 3e160c5) and of NDCG_exp over grades below 1
# (0.0 for 1.0, fixed in 9be498f). 3: means are correctly rounded sums over counts (harness.evaluation.mean), the
# same in any query order, where numpy's pairwise sum in the qrels' line order moved their last bits (~1e-16);
# per-query values and runs are unchanged.
NUMBERS_VERSION = 3
# Bumped whenever a change of the code moves a run (the documents a retriever or stage returns, their order or
# scores): in every pipeline stage's cache key (harness.pipeline.cache) and metrics.json's
# ``versions.runs_version``, which a bench cell must record to be reused (harness.bench.cells.is_finished:
# a cell of another is run again; one that records none counts as 2). A change of a run is a change of numbers too: bump both. 2: the first; stage keys
# before it named no version, and their runs include rank-bm25's of k1 = 0, whose NaN scores dropped every
# document lacking a query term (3e160c5), read back as cache hits after the fix.
# Neither version is in an index cache's key: a change of what an index, an embedding or a parsed corpus holds
# (not only of how it is searched) must also bump that cache's own format version, or the old entries are read
# back as hits: retrievers/bm25/cache.py FORMAT_VERSION, retrievers/dense/cache.py FORMAT_VERSION (the
# sparse encoder's cache shares it), the engines' (retrievers/engines/sqlite.py, postgres.py) and
# harness/datasets/corpus_cache.py FORMAT.
RUNS_VERSION = 2


def versions() -> dict[str, str]:
    """Name -> version (a new dict each call; the metadata is read once per process)."""
    return dict(_versions())


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    out = {"retrieval-harness": harness.__version__, "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


# The libraries that compute a model's embeddings or scores (dense and learned sparse encoders, rerankers): what an
# embedding cache entry records as the versions that computed it (versions.json, retrievers/dense/cache.py).
ENCODER_LIBRARIES = ("sentence-transformers", "transformers", "torch")


def computed_with(names) -> dict[str, str]:
    """This process's versions of the libraries ``names`` that are installed (name -> version, names sorted, as
    an entry's record reads back): what a cache entry records, when it is written, as the versions of the
    libraries that computed it. No version is in any cache key (an upgrade would compute everything again;
    the caches' own format versions guard what an entry holds), so an entry is reused by a process of other
    versions, which reports the entry's (docs/cache.md)."""
    found = versions()
    return {name: found[name] for name in sorted(names) if name in found}  # (sorted: as an entry's record reads back)


def known_versions(value) -> list[str]:
    """The versions a record holds for one library (a version, or a list of them where several processes wrote
    an entry's parts), without ``unknown`` (parts written before versions were recorded) and anything not a
    str."""
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [v for v in values if isinstance(v, str) and v != "unknown"]


def versions_in(record: Path) -> dict[str, str] | None:
    """The ``versions`` (name -> version) of the JSON file ``record`` (a BM25 index's manifest, a faiss index's
    record), None where it has none (written before they were recorded) or cannot be read."""
    try:
        found = json.loads(Path(record).read_text(encoding="utf-8")).get("versions")
    except (OSError, ValueError, AttributeError):
        return None
    return versions_value(found)


def versions_value(found) -> dict[str, str] | None:
    """``found`` (a record's ``versions``, as JSON reads it: :func:`versions_in`'s, a parsed corpus's Arrow
    metadata) as name -> version, None where it is not one (a str for each name)."""
    return dict(found) if isinstance(found, dict) and all(isinstance(v, str) for v in found.values()) else None


def version_changes(recorded: dict | None) -> list[str]:
    """``"transformers 1.0 (this process: 2.0)"`` for each library of ``recorded`` (name -> the version that
    computed a cache entry, or a list of them where several processes wrote its parts) whose recorded version
    is not this process's. ``unknown`` (parts written before versions were recorded), a library this process
    lacks and a ``recorded`` of None (an entry written before they were) are not compared."""
    if not isinstance(recorded, dict):
        return []
    found, out = versions(), []
    for name, old in recorded.items():
        olds = known_versions(old)
        now = found.get(name)
        if now is not None and any(v != now for v in olds):
            out.append(f"{name} {', '.join(olds)} (this process: {now})")
    return out


RECOMPUTE_HINT = "give the retriever a cache_dir of its own (or cache=false) to compute it again"


def reused_versions_warning(stats: dict | None, where: str, hint: str = RECOMPUTE_HINT) -> str | None:
    """One line naming each library whose version differs between what computed the cached work a run reused
    (``stats``' ``*_versions`` blocks: ``documents_versions``, ``index_versions``...) and this process, else
    None; ``where`` names the block (``retriever_stats``, ``stage 'dense'``), ``hint`` how to compute it again."""
    if not isinstance(stats, dict):
        return None
    parts = [f"{key} {'; '.join(changes)}" for key, value in sorted(stats.items(), key=lambda item: str(item[0]))
             if str(key).endswith("_versions") and (changes := version_changes(value))]
    if not parts:
        return None
    return (f"{where}: cached work computed under other library versions was reused ({'; '.join(parts)}): "
            f"versions are in no cache key; {hint}")


def recorded() -> dict:
    """What a metrics.json records as ``versions`` (written by :meth:`MetricsDocument.build
    <harness.reports.document.MetricsDocument.build>` only): the build that computed it, then the
    Python and libraries of :func:`versions`::

        {"retrieval-harness": "0.1.0", "numbers_version": 2, "runs_version": 2,
         "git": {"commit": "3b9c461a...", "dirty": false} | null, "python": "3.11.7", "numpy": ...}

    ``git`` is :func:`harness.fingerprint.harness_commit` (the commit of the harness source; null
    outside git), read once per process (~0.05 s of git calls)."""
    from harness.fingerprint import harness_commit

    found = versions()
    commit = harness_commit()
    return {"retrieval-harness": found.pop("retrieval-harness"), "numbers_version": NUMBERS_VERSION,
            "runs_version": RUNS_VERSION, "git": dict(commit) if commit else None, **found}
