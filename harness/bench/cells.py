"""The cells of a benchmark (dataset x retriever), their fingerprints, and whether one is finished.

A cell's result folder is ``<output_dir>/<bench>/<dataset label>/<retriever label>/``. Its
fingerprint is the sha256 of what determines its numbers: the dataset's split and file checksums,
the retriever's type, config params and resolved :meth:`params` (a pipeline's: its stages and their
components' resolved params), and the evaluation settings (k,
depth, metrics, relevance threshold, identical-id rule). A cell is finished when its folder holds
a readable metrics.json recording the same fingerprint (metrics.json is written last, so its
presence means the other files are complete).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import harness
from harness.bench.config import BenchConfig, DatasetSpec, RetrieverSpec
from harness.errors import HarnessError, InputError
from harness.reports.document import MetricsDocument, plain_json
from harness.reports.writer import RESULT_FILES
# Recorded by every cell (metrics.json's bench.numbers, as every metrics.json's versions.numbers_version) and
# required of a finished one, beside its fingerprint's harness version; defined and documented in
# harness.versions (cells before it record none, and were reused after the fixes it names). RUNS_VERSION too
# (metrics.json's versions.runs_version): a bump of it alone moved runs, and every cell was reused with its
# old run and numbers; a cell that records none was computed when it was FIRST_RUNS_VERSION (both versions
# began at 2 in one change, so a cell of NUMBERS_VERSION 2 without it is of RUNS_VERSION 2, and is reused).
from harness.versions import NUMBERS_VERSION, RUNS_VERSION

FIRST_RUNS_VERSION = 2


@dataclass(frozen=True)
class Cell:
    dataset: DatasetSpec
    retriever: RetrieverSpec  # or a harness.pipeline.Pipeline (same label / to_dict)
    folder: Path

    @property
    def name(self) -> str:
        return f"{self.dataset.label} / {self.retriever.label}"


def cells(config: BenchConfig) -> list[Cell]:
    """Every cell, dataset-major (each dataset is loaded once for all its retrievers)."""
    return [Cell(d, r, config.folder / d.label / r.label) for d in config.datasets
            for r in (*config.retrievers, *config.pipelines)]


def evaluation_settings(config: BenchConfig, metric_names: list[str]) -> dict:
    return {"k": list(config.k), "depth": config.search_depth, "metrics": list(metric_names),
            "relevance_threshold": config.relevance_threshold, "ignore_identical_ids": config.ignore_identical_ids,
            "semantics": config.semantics}


def fingerprint(dataset_files: dict[str, str], split: str, spec: RetrieverSpec, resolved_params: dict,
                evaluation: dict, as_written: bool = False) -> str | None:
    """A retriever cell's fingerprint (a pipeline cell's: its ``to_dict()`` instead of type and params,
    and its stages' resolved params), with the harness's version: a cell finished by another release
    is run again (retriever code is not in its params; a cell of an earlier :data:`NUMBERS_VERSION` too:
    :func:`is_finished`). Equal numbers give one fingerprint
    (``k1 = 1`` and ``k1 = 1.0``: :func:`equal_numbers`), and so do the same metrics in another order
    (the leaderboard's ``metrics`` reordered); ``as_written``: the fingerprint that earlier runs
    recorded, numbers and metrics as written (see :func:`is_finished`); None where JSON cannot write
    them (a plugin's params() with numpy or tuple keys: no earlier run recorded a fingerprint of them).
    ``dataset_files``: ``Dataset.identity()`` (the content's checksums: a plain dataset's are its files', so
    its cells' fingerprints are those recorded before content was; a ``.gz`` corpus's cells run once again)."""
    system = {"type": spec.type, "params": spec.params, "resolved": resolved_params} \
        if isinstance(spec, RetrieverSpec) else {"pipeline": spec.to_dict(), "resolved": resolved_params}
    blob = {"dataset": {"split": split, "files": dict(sorted(dataset_files.items()))},
            "retriever": system, "evaluation": evaluation,
            "harness": harness.__version__}  # another release may compute other numbers: its cells run again
    if not as_written:
        if "metrics" in evaluation:  # (the metrics computed, in any order: one set of numbers)
            blob["evaluation"] = {**evaluation, "metrics": sorted(evaluation["metrics"])}
        # (a plugin's params(): a set in one order, whatever the hash seed; inf, -inf and NaN apart, not all None)
        blob = equal_numbers(plain_json(blob, finite=False))
    try:
        text = json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # (as written only: plain_json makes the normalised blob JSON)
        if not as_written:
            raise
        return None  # (it failed every cell that --force did not run: TypeError, keys must be str, ...)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def equal_numbers(value):
    """``value`` with each integral float as the int it equals (1.0 -> 1, -0.0 -> 0), in dicts and lists:
    JSON writes 1 and 1.0 apart, so a config's ``k1 = 1.0`` ran the cell of ``k1 = 1`` again."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: equal_numbers(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [equal_numbers(item) for item in value]
    return value


def read_metrics(folder: Path) -> MetricsDocument | None:
    """The folder's metrics.json, or None when it is absent or unreadable."""
    try:
        return MetricsDocument.read(folder / "metrics.json")
    except InputError:
        return None


def is_finished(folder: Path, expected_fingerprint: str, metric_names: list[str],
                as_written: str | None = None) -> bool:
    """Whether the folder holds a complete cell of ``expected_fingerprint`` (or of ``as_written``: the
    same cell's fingerprint with its numbers as written, which earlier runs recorded: such a cell is
    not run again for the change of its fingerprint's form). A metrics.json that records no fingerprint
    (``harness run``'s) is no finished cell, whether ``as_written`` is given or not, and nor is one that
    records another :data:`NUMBERS_VERSION` (or none: computed by an earlier build of the release), or
    another :data:`RUNS_VERSION` (``versions.runs_version``; none: :data:`FIRST_RUNS_VERSION`)."""
    doc = read_metrics(folder)
    accepted = (expected_fingerprint,) if as_written is None else (expected_fingerprint, as_written)
    if doc is None or (doc.bench or {}).get("fingerprint") not in accepted:
        return False
    if (doc.bench or {}).get("numbers") != NUMBERS_VERSION:
        return False
    if (doc.versions or {}).get("runs_version", FIRST_RUNS_VERSION) != RUNS_VERSION:
        return False
    if not all(name in doc.metrics for name in metric_names):
        return False
    return all((folder / name).is_file() for name in RESULT_FILES)


def file_sha256(path: Path, memo: dict | None = None, content: bool = False) -> str:
    """sha256 of a file (``content``: of what it holds, :func:`harness.checksums.content_sha256`: a ``.gz``'s
    decompressed bytes); with ``memo`` (a dict persisted by the caller), reused while the file's
    size, modification time, change time (ns) and inode are unchanged, so a rerun of a finished
    benchmark does not re-hash gigabytes of corpus. (Size and mtime alone are not enough: ``cp -p``,
    ``rsync -a`` or ``touch -r`` give a rewritten file its old mtime, and a qrels file whose grades
    changed keeps its size; ctime cannot be set back, as the corpus cache's memo relies on.) The
    checksum itself comes from the corpus cache (:func:`harness.datasets.corpus_cache.content_checksum`,
    ``source_checksum``), which remembers a large file's two checksums by its stat: a dataset loaded
    before costs the plan no hashing, and a load after the plan none either."""
    from harness.datasets import corpus_cache

    field, hasher = (("content_sha256", corpus_cache.content_checksum) if content and path.suffix == ".gz"
                     else ("sha256", corpus_cache.source_checksum))
    if memo is None:
        return hasher(path)
    stat = path.stat()
    key = str(path.resolve())
    entry = memo.get(key)
    stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino}
    current = isinstance(entry, dict) and all(entry.get(name) == value for name, value in stamp.items())
    if current and isinstance(entry.get(field), str):  # (a memo of an earlier release has no content_sha256)
        return entry[field]
    digest = hasher(path)
    memo[key] = {**(entry if current else {}), **stamp, field: digest}
    return digest


def dataset_checksums(spec: DatasetSpec, memo: dict | None = None) -> dict[str, str] | None:
    """The sha256 of what a BEIR folder's corpus, queries and qrels files hold (a ``.gz``'s decompressed
    bytes), keyed as the loader records them in ``Dataset.content`` (names without ``.gz``): a cell's
    dataset identity (``Dataset.identity()``), so the corpus read plain or gzipped is one cell; None when
    the dataset is not a local BEIR folder (then it is loaded to learn them)."""
    from harness.datasets import resolve
    from harness.datasets.beir import find_file

    try:
        _, folder = resolve(spec.source, download=False, split=spec.split)
        paths = [find_file(folder, "corpus.jsonl"), find_file(folder, "queries.jsonl")]
    except HarnessError:
        return None
    qrels = folder / "qrels" / f"{spec.split}.tsv"
    if not qrels.is_file():
        return None
    return {**{p.name.removesuffix(".gz"): file_sha256(p, memo, content=True) for p in paths},
            f"qrels/{qrels.name}": file_sha256(qrels, memo, content=True)}
