"""Read systems to compare into aligned per-query arrays.

A system is given as one of

* a result folder (as written by ``harness run``) holding ``metrics.json``, and optionally
  ``per_query.jsonl`` (query texts) and ``run.trec`` (the ranking);
* a ``metrics.json`` file (``harness run`` or ``harness evaluate --json``); the files above are
  looked for beside it;
* a TREC run file, evaluated here against the qrels given with it; ``-`` is a run read from standard
  input (named ``stdin``; ``<stdin>`` in errors).

``NAME=PATH`` names the system (default: the folder name, or the file name without suffix).

Alignment: every system must have been evaluated on the same set of queries (``metrics.json``
scores a judged query missing from the run as 0, so systems on the same qrels always agree). A
query present in one system but not another is an :class:`InputError` by default, because a
gate that silently drops queries can hide a regression; ``intersection=True`` compares on the
queries common to all systems instead and returns a warning saying how many were dropped.

Order: the aligned queries are in query-id order (Python's string order, code point by code point: the
order of C's ``strcmp`` on their UTF-8 bytes, in which trec_eval evaluates queries), whatever the order of
the lines of the qrels, the runs or the metrics files, and whichever system comes first. The tests draw
their random signs and resampled queries by position (:mod:`harness.compare.significance`), so the order
of the queries is part of the draws: in the first system's order (its qrels' line order), the same
judgments with their lines re-sorted gave another Monte Carlo p-value and bootstrap interval (SciFact
BM25 k1 0.9 vs 1.2, NDCG@10: p 0.5397 or 0.5422, interval low -0.0027 or -0.0028), and a gate near
``alpha`` could flip. A canonical order makes ``harness compare``, ``harness check`` and ``harness report``
a function of the per-query values alone, their means (summed in that order) included.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from harness.compare.semantics import refuse_mixed_semantics
from harness.errors import InputError
from harness.reports.document import MetricsDocument


def _objects(values: Iterable[str]) -> np.ndarray:
    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@dataclass
class SystemResult:
    """One system's per-query values: ``values[metric][i]`` belongs to ``query_ids[i]``."""

    name: str
    source: Path
    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    document: MetricsDocument | None = None  # the metrics.json, when read from one
    explicit_name: bool = False  # given as NAME=PATH (never renamed)
    per_query_path: Path | None = None
    run_path: Path | None = None
    run_sha256: str | None = None  # the sha256 its metrics file records for the run (checked by ``run``)
    settings: dict = field(default_factory=dict)  # how the values were computed (see ``ranked``)
    qrels_sha256: str | None = None  # a run file's: the qrels it was evaluated on here
    _texts: dict[str, str] | None = field(default=None, repr=False)
    _run: object = field(default=None, repr=False)
    _ranked: object = field(default=None, repr=False)
    _run_index: dict | None = field(default=None, repr=False)

    @classmethod
    def from_evaluation(cls, name: str, result) -> "SystemResult":
        """The system ``name`` of an :class:`~harness.evaluation.EvaluationResult` computed in this process
        (as ``harness compare`` makes one of a run file it evaluates): its per-query values and settings, to
        :func:`align` and :func:`~harness.compare.compare` with others (ranx's ``compare`` of runs)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a system's name is a non-empty str, got {name!r}")
        return cls(name=name, source=Path(f"<{name}>"), query_ids=_objects(result.query_ids.tolist()),
                   values={m: np.asarray(v, dtype=np.float64) for m, v in result.values.items()},
                   explicit_name=True, settings=dict(result.settings))

    def __repr__(self) -> str:
        """A one-line summary (the dataclass's repr printed every per-query array and the whole metrics.json),
        e.g. ``SystemResult('bm25', 300 queries, 18 metrics, source='results/scifact/bm25/metrics.json')``."""
        return (f"SystemResult({self.name!r}, {len(self.query_ids):,} queries, {len(self.values)} metrics, "
                f"source={str(self.source)!r})")

    @property
    def metric_names(self) -> list[str]:
        return list(self.values)

    def query_texts(self) -> dict[str, str]:
        """Query id -> text from ``per_query.jsonl`` beside the metrics (empty when absent or unreadable)."""
        if self._texts is None:
            self._texts = read_query_texts(self.per_query_path) if self.per_query_path else {}
        return self._texts

    def run(self):
        """The ranking (a :class:`harness.run.Run` in canonical order), or None when there is none.

        A malformed ``run.trec``, or a run file whose sha256 is not the one its metrics file records
        (``run_sha256``), raises InputError; callers that only decorate their output with rankings
        catch it and go on without.
        """
        if self._run is None and self.run_path is not None:
            from harness.checksums import sha256
            from harness.formats.trec import read_run

            if self.run_sha256 is not None and sha256(self.run_path) != self.run_sha256:
                raise InputError("not the run these values were computed on (its sha256 differs from the one "
                                 f"{self.source.name} records)", self.run_path)
            self._run = read_run(self.run_path)
        return self._run

    def ranked(self):
        """The ranking the values were computed on (None without a run): the run in the evaluator's
        order and filtering under ``settings`` (the metrics.json's, or the evaluator's that scored a run
        file here), as :func:`harness.evaluation.semantics.evaluated_order` defines it: without the
        documents whose id is the query's unless ``ignore_identical_ids`` is false, and under
        ``trec_eval-9`` ranked by score as float32, then document id descending (scores a 1.00000001,
        b 1.0: b first). A metrics.json that records no semantics predates them: canonical float64 order.
        """
        if self._ranked is None:
            run = self.run()
            if run is None:
                return None
            from harness.evaluation.semantics import evaluated_order

            self._ranked = evaluated_order(run, self.settings)
        return self._ranked

    def top_docs(self, query_id: str, k: int) -> list[str] | None:
        """The first ``k`` document ids of ``query_id`` in the ranking the values were computed on
        (:meth:`ranked`), in that order; None without a run, [] if the run lacks the query."""
        run = self.ranked()
        if run is None:
            return None
        if self._run_index is None:
            self._run_index = {q: i for i, q in enumerate(run.query_ids.tolist())}
        i = self._run_index.get(query_id)
        return [] if i is None else run.doc_ids(i)[:k]


# ------------------------------------------------------------------------------ readers
def read_query_texts(path: Path) -> dict[str, str]:
    """``query_id -> query`` from a per_query.jsonl; lines without both fields are skipped."""
    texts: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("query_id") is not None and isinstance(obj.get("query"), str):
                    texts[str(obj["query_id"])] = obj["query"]
    except (OSError, UnicodeDecodeError):
        return {}
    return texts


def read_metrics_json(path: str | Path, name: str | None = None) -> SystemResult:
    """Read a metrics.json (:class:`~harness.reports.MetricsDocument`) with its per-query values."""
    path = Path(path)
    doc = MetricsDocument.read(path)
    if not doc.per_query:
        raise InputError("no per-query values ('per_query'): significance tests need them", path)
    rows = list(doc.per_query.values())
    columns = {metric: np.array([row[metric] for row in rows], dtype=np.float64) for metric in rows[0]}
    folder = path.parent
    per_query_path = folder / "per_query.jsonl"
    run_path, run_sha256 = _evaluated_run(doc, folder)
    # (the folder's own name, also when given as '.' or '..': Path('.').name is '', Path('..').name '..')
    named = Path(os.path.abspath(folder)).name
    return SystemResult(
        name=name or (named if path.name == "metrics.json" else path.stem) or str(path),
        source=path, query_ids=_objects(doc.per_query), values=columns, document=doc, settings=dict(doc.settings),
        per_query_path=per_query_path if per_query_path.is_file() else None,
        run_path=run_path, run_sha256=run_sha256)


def _evaluated_run(doc: MetricsDocument, folder: Path) -> tuple[Path | None, str | None]:
    """(path, sha256 to check) of the run a metrics file's values were computed on.

    A result folder of ``harness run``: its ``run.trec`` (nothing to check). A metrics file of
    ``harness evaluate --json`` names the run file it evaluated whole (retriever ``run-file`` with the
    file's path and sha256, no depth): that file, at its recorded path or else beside the metrics file,
    with the recorded sha256 (checked when the run is read). A ``run.trec`` beside such a file may be
    another system's run (``harness evaluate --run run.trec --run new.trec --json DIR`` writes both
    metrics files into one folder), so it is never taken on its name alone.
    """
    retriever = doc.retriever if isinstance(doc.retriever, dict) else {}
    params = retriever.get("params")
    if (retriever.get("name") == "run-file" and isinstance(params, dict) and isinstance(params.get("path"), str)
            and isinstance(params.get("sha256"), str) and (doc.settings or {}).get("depth") is None):
        recorded = Path(params["path"])
        found = [p for p in dict.fromkeys((recorded, folder / recorded.name)) if p.is_file()]
        if len(found) > 1 and not found[0].samefile(found[1]):
            # a relative path recorded elsewhere: the file it names from here may be another run (a run.trec
            # in the working directory), where the one beside the metrics file is the run evaluated
            from harness.checksums import sha256

            def differs(candidate: Path) -> bool:
                try:
                    return sha256(candidate) != params["sha256"]
                except OSError:  # (unreadable: not the run evaluated; its reader names it if it is chosen)
                    return True

            found.sort(key=differs)
        return (found[0], params["sha256"]) if found else (None, None)
    run_path = folder / "run.trec"
    return (run_path if run_path.is_file() else None), None


def read_run_file(path: str | Path, qrels_path: str | Path, metrics: Sequence[str], name: str | None = None,
                  relevance_threshold: float = 1.0, ignore_identical_ids: bool = True,
                  qrels_raw: bytes | None = None) -> SystemResult:
    """Evaluate a TREC run against qrels (TREC or BEIR tsv) on ``metrics``, each read as :func:`align` reads
    it (:func:`~harness.evaluation.metrics.evaluated_names`: ``map`` alone is ``AP``, not ``MAP@k`` at every default cutoff, which align
    then found no ``AP`` in); ``qrels_raw``: the qrels' bytes already read from a pipe
    (:func:`~harness.formats.trec.read_once`), for several run files. ValueError for a name that spells
    no metric."""
    import hashlib

    from harness.checksums import sha256
    from harness.evaluation import Evaluator
    from harness.formats.trec import STDIN_NAME, is_stdin, read_once, read_qrels, read_run

    stdin = is_stdin(path)
    path = STDIN_NAME if stdin else Path(path)
    run = read_run("-" if stdin else path)
    # (qrels from a pipe, --qrels <(zcat q.gz), are read once: a checksum taken after the parse read an empty
    # pipe, a false 'not among the dataset files' warning, and a named pipe made it wait for good)
    raw = qrels_raw if qrels_raw is not None else read_once(qrels_path, "qrels")
    from harness.evaluation.metrics import evaluated_names

    names = list(dict.fromkeys(name for metric in metrics for name in evaluated_names(metric)))
    result = Evaluator(names, relevance_threshold=relevance_threshold,
                       ignore_identical_ids=ignore_identical_ids).evaluate(run, read_qrels(qrels_path, raw))
    digest = hashlib.sha256(raw).hexdigest() if raw is not None else sha256(qrels_path)
    return SystemResult(name=name or ("stdin" if stdin else path.stem), source=path, query_ids=result.query_ids,
                        values={m: np.asarray(v, dtype=np.float64) for m, v in result.values.items()},
                        run_path=None if stdin else path, settings=dict(result.settings), qrels_sha256=digest,
                        _run=run)


def find_qrels(system: SystemResult) -> Path | None:
    """The qrels a metrics.json was evaluated on, when still present with the recorded sha256.

    ``harness run`` records ``dataset.name``/``split`` and ``files["qrels/<split>.tsv"]``;
    ``harness evaluate`` records the qrels path itself as the key of ``files``.
    """
    dataset = system.document.dataset if system.document else {}
    files = dataset.get("files") or {}
    if not isinstance(files, dict):
        return None
    candidates = []
    split = dataset.get("split")
    key = f"qrels/{split}.tsv"
    if split and key in files and isinstance(dataset.get("name"), str):
        from harness.datasets import resolve

        try:
            _, folder = resolve(dataset["name"])
            candidates.append((folder / key, files[key]))
        except Exception:  # noqa: BLE001 - a dataset that cannot be found only costs the annotation
            pass
    candidates.extend((Path(name), digest) for name, digest in files.items()
                      if "qrels" in name or name.endswith((".tsv", ".txt", ".qrels")))
    from harness.datasets.beir import sha256

    for path, digest in candidates:
        try:
            if path.is_file() and sha256(path) == digest:
                return path
        except OSError:
            continue
    return None


def split_name(argument: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH); a plain path (even one containing '=') -> (None, PATH)."""
    name, sep, rest = argument.partition("=")
    if sep and name and rest and not Path(argument).exists():
        return name, rest
    return None, argument


def load_system(argument: str, qrels: str | Path | None = None, metrics: Sequence[str] = (),
                **evaluator_options) -> SystemResult:
    """Load one ``[NAME=]PATH`` argument (result folder, metrics.json, or run file with ``qrels``)."""
    from harness.formats.trec import STDIN_NAME, is_stdin

    name, text = split_name(argument)
    path = STDIN_NAME if is_stdin(text) else Path(text)
    if is_stdin(text):
        if qrels is None:
            raise InputError("a run file needs qrels to be evaluated (--qrels FILE)", path)
        if not metrics:
            raise InputError("a run file needs the metrics to compute (--metric)", path)
        system = read_run_file(text, qrels, metrics, name, **evaluator_options)
    elif path.is_dir():
        if not (path / "metrics.json").is_file():
            raise InputError("no metrics.json in this result folder", path)
        system = read_metrics_json(path / "metrics.json", name)
    elif not path.is_file():
        raise InputError("no such file or folder", path)
    elif path.suffix == ".json":
        system = read_metrics_json(path, name)
    elif qrels is None:
        raise InputError("a run file needs qrels to be evaluated (--qrels FILE)", path)
    elif not metrics:
        raise InputError("a run file needs the metrics to compute (--metric)", path)
    else:
        system = read_run_file(path, qrels, metrics, name, **evaluator_options)
    system.explicit_name = name is not None
    return system


def is_run_argument(argument: str) -> bool:
    """Whether :func:`load_system` reads ``argument`` (``[NAME=]PATH``) as a TREC run to evaluate (``-``,
    standard input, or a file not named ``.json``) rather than a result evaluated already; looked at
    before any input is read (``--qrels -`` given for result folders only is refused without waiting
    on standard input). InputError for a path that is neither a file nor a folder, as load_system's."""
    from harness.formats.trec import is_stdin

    _, text = split_name(argument)
    if is_stdin(text):
        return True
    path = Path(text)
    if not path.is_dir() and not path.is_file():
        raise InputError("no such file or folder", path)
    return not path.is_dir() and path.suffix != ".json"


def unique_names(systems: list[SystemResult]) -> None:
    """Make default names unique by prefixing the parent folder; refuse names that still clash."""
    counts: dict[str, int] = {}
    for s in systems:
        counts[s.name] = counts.get(s.name, 0) + 1
    for s in systems:
        if counts[s.name] > 1 and not s.explicit_name:
            folder = s.source.parent if s.source.name == "metrics.json" else s.source
            s.name = f"{folder.parent.name}/{s.name}" if folder.parent.name else s.name
    seen: dict[str, SystemResult] = {}
    for s in systems:
        if s.name in seen:
            raise InputError(f"two systems are both named {s.name!r} (also {seen[s.name].source}); "
                             "name them with NAME=PATH", s.source)
        seen[s.name] = s


# ------------------------------------------------------------------------------ alignment
@dataclass(frozen=True)
class Aligned:
    """Per-query values of several systems on the same queries, in query-id order (see the module docstring)."""

    query_ids: np.ndarray
    systems: list[SystemResult]
    values: dict[str, dict[str, np.ndarray]]  # system name -> metric -> values aligned with query_ids
    metrics: list[str]
    warnings: list[str]

    def __repr__(self) -> str:
        """A one-line summary (the dataclass's repr printed every system's per-query arrays)."""
        return (f"Aligned({len(self.query_ids):,} queries, systems {[s.name for s in self.systems]!r}, "
                f"metrics {self.metrics!r}, {len(self.warnings)} warnings)")

    def of(self, system: str, metric: str) -> np.ndarray:
        return self.values[system][metric]


def result_metric_names(metric: str, results: Sequence[SystemResult]) -> list[str]:
    """The names under which ``results`` hold ``metric``: as given when every result has it, else
    :func:`~harness.evaluation.metrics.evaluated_names`; ``[metric]`` itself when it spells no metric (a family that needs a cutoff,
    an unknown name: :func:`align` names what is missing)."""
    if results and all(metric in s.values for s in results):
        return [metric]
    from harness.evaluation.metrics import evaluated_names

    try:
        return evaluated_names(metric)
    except ValueError:
        return [metric]


def resolve_metrics(metrics: Sequence[str], systems: Sequence[SystemResult]) -> list[str]:
    """The names under which every one of ``systems`` holds ``metrics`` (:func:`result_metric_names`, in
    order, once each); InputError naming the first result that lacks one, and the name it was given as
    where it reads as another (``metric AP (given as map) is not in this result``)."""
    typed = {}  # the name each metric was given as, where it reads as another (MAP alone: AP)
    for m in metrics:
        for name in result_metric_names(m, systems):  # (iprec_at_recall: its 11 levels)
            typed.setdefault(name, m)
    for s in systems:
        missing = [m for m in typed if m not in s.values]
        if missing:
            given = f" (given as {typed[missing[0]]})" if typed[missing[0]] != missing[0] else ""
            raise InputError(f"metric {missing[0]}{given} is not in this result (it has {', '.join(s.metric_names)})",
                             s.source)
    return list(typed)


def align(systems: Sequence[SystemResult], metrics: Sequence[str], intersection: bool = False) -> Aligned:
    """Align ``systems`` on their queries for ``metrics`` (see the module docstring for the rule; a metric
    may be named as ``harness evaluate -m`` takes it: :func:`result_metric_names`)."""
    systems = list(systems)
    if not systems:
        raise ValueError("nothing to align")
    if not metrics:
        raise ValueError("no metrics to align")
    refuse_mixed_semantics(systems)
    metrics = resolve_metrics(metrics, systems)
    warnings: list[str] = []
    reference = systems[0]
    query_ids = reference.query_ids.tolist()
    common = set(query_ids)
    for s in systems[1:]:
        ids = set(s.query_ids.tolist())
        if ids == common:
            continue
        only_ref = [q for q in query_ids if q not in ids]
        only_this = [q for q in s.query_ids.tolist() if q not in common]
        if not intersection:
            detail = []
            if only_ref:
                detail.append(f"{len(only_ref)} of {reference.name}'s queries are missing here (first: {only_ref[0]!r})")
            if only_this:
                detail.append(f"{len(only_this)} queries are not in {reference.name} (first: {only_this[0]!r})")
            hint = "evaluate both on the same qrels"
            thresholds = _settings(reference).get("relevance_threshold"), _settings(s).get("relevance_threshold")
            if None not in thresholds and thresholds[0] != thresholds[1]:
                # (the same qrels under another threshold leave out other queries: those judged below it)
                hint = (f"they were evaluated with different relevance thresholds ({thresholds[0]!r} vs "
                        f"{thresholds[1]!r}), which leave out different queries (those with no grade at or above "
                        "it): evaluate both with the same threshold")
            raise InputError("different query sets: " + "; ".join(detail)
                             + f" -- {hint}, or pass --intersection", s.source)
        common &= ids
    if len(common) < len(query_ids) or any(len(s.query_ids) != len(common) for s in systems):
        union = set().union(*(set(s.query_ids.tolist()) for s in systems))
        warnings.append(f"comparing on the {len(common)} queries common to all systems "
                        f"({len(union) - len(common)} of {len(union)} queries dropped)")
    ordered = sorted(common)  # (the canonical order: see the module docstring)
    if len(ordered) < 2:
        raise InputError(f"only {len(ordered)} query in common: paired tests need at least 2", reference.source)
    values: dict[str, dict[str, np.ndarray]] = {}
    for s in systems:
        position = {q: i for i, q in enumerate(s.query_ids.tolist())}
        take = np.fromiter((position[q] for q in ordered), dtype=np.int64, count=len(ordered))
        values[s.name] = {m: s.values[m][take] for m in metrics}
    warnings.extend(consistency_warnings(systems))
    from harness.compare.provenance import library_versions_warnings, numbers_warnings

    warnings.extend(numbers_warnings(systems))  # (computed by builds that compute other numbers: named, not refused)
    warnings.extend(library_versions_warnings(systems))  # (embeddings, indexes, scores of other library versions)
    hardware = hardware_warning(systems)
    warnings.extend([hardware] if hardware else [])
    return Aligned(_objects(ordered), systems, values, metrics, warnings)


def consistency_warnings(systems: Sequence[SystemResult]) -> list[str]:
    """Warnings when the systems say they were evaluated differently: dataset files (the metrics files'
    sha256) and evaluation settings (a metrics file's ``settings``, or those of the evaluator that scored
    a run file here: a run file against a result made with ``--relevance-threshold 2`` or
    ``--keep-identical-ids`` is warned about as two such metrics files are)."""
    warnings = []
    ref_doc = next((s for s in systems if s.document is not None), None)
    ref = next((s for s in systems if s.document is not None or s.settings), None)
    for s in systems:
        if s.document is not None and s is not ref_doc:
            # one dataset when the files are the same, or what they hold: each result's content checksums (one
            # text plain or gzipped is one dataset), else its files' (a result written before content was
            # recorded, or by harness evaluate): a plain file's sha256 is its content's, so such a result of plain
            # files matches a newer one of the same text gzipped (a .gz's is not: the same .gz matches by its file)
            content = bool(_dataset_digests(ref_doc, "content") and _dataset_digests(s, "content"))
            # (two datasets built in Python record no files, only what they hold: their files say nothing)
            files, others = _dataset_digests(ref_doc), _dataset_digests(s)
            if not ((files and others and _same_files(files, others))
                    or _same_files(_identity_digests(ref_doc), _identity_digests(s))):
                warnings.append(f"{s.name} and {ref_doc.name} were evaluated on different dataset files "
                                f"(sha256{' of their content' if content else ''} differ)")
        elif s.qrels_sha256 is not None and ref_doc is not None:  # a run file evaluated here, on --qrels
            ref_files = _dataset_digests(ref_doc)
            if ref_files and s.qrels_sha256 not in ref_files:
                warnings.append(f"{s.name} was evaluated on qrels that are not among the dataset files "
                                f"{ref_doc.name} was evaluated on (sha256 differ)")
        if s is ref or not (s.document is not None or s.settings):
            continue
        ref_settings, settings = _settings(ref), _settings(s)
        changed = sorted(k for k in set(ref_settings) & set(settings)
                         if None not in (ref_settings[k], settings[k]) and ref_settings[k] != settings[k])
        if changed:
            warnings.append(f"{s.name} and {ref.name} differ in evaluation settings: "
                            + ", ".join(f"{k} {ref_settings[k]!r} vs {settings[k]!r}" for k in changed))
    return warnings


def _same_files(a: set[str], b: set[str]) -> bool:
    """Whether two results' checksums say one dataset: harness evaluate records only the qrels, harness run the
    corpus, queries and qrels, so a subset is fine; either unknown (none recorded) is not a difference."""
    return not a or not b or a <= b or b <= a


def _identity_digests(system: SystemResult) -> set[str]:
    """A metrics file's dataset identity (as ``Dataset.identity()``): its ``dataset.content`` checksums, else
    its ``dataset.files``'."""
    return _dataset_digests(system, "content") or _dataset_digests(system)


def _dataset_digests(system: SystemResult, block: str = "files") -> set[str]:
    """The sha256 values of a metrics file's ``dataset.files`` (``{file: sha256}``, or ``dataset.content``:
    of what each file holds, a ``.gz``'s decompressed bytes); none where it holds no such mapping (a
    hand-edited or foreign file: a list, a nested table failed compare with a traceback)."""
    files = system.document.dataset.get(block)
    return {v for v in files.values() if isinstance(v, str)} if isinstance(files, dict) else set()


def _settings(system: SystemResult) -> dict:
    """How a system's values were computed: its metrics file's settings, or a run file's evaluator's."""
    return dict(system.document.settings or {}) if system.document is not None else dict(system.settings)


def hardware_warning(systems: Sequence[SystemResult]) -> str | None:
    """A warning when the results' efficiency fingerprints name different hardware (None otherwise)."""
    from harness.fingerprint import describe_hardware, hardware

    known = [(s, hardware((s.document.efficiency or {}).get("fingerprint"))) for s in systems
             if s.document is not None and s.document.efficiency]
    known = [(s, hw) for s, hw in known if hw]
    differ = [(s, hw) for s, hw in known[1:] if hw != known[0][1]]
    if not differ:
        return None
    ref, ref_hw = known[0]
    return (f"timings measured on different hardware are not comparable: {ref.name}: {describe_hardware(ref_hw)}; "
            + "; ".join(f"{s.name}: {describe_hardware(hw)}" for s, hw in differ))
