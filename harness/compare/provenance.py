"""Warn when results were computed by builds that compute different numbers.

Every metrics.json records the :data:`~harness.versions.NUMBERS_VERSION` of the build that computed
it (``versions.numbers_version``, :func:`harness.versions.recorded`); a run file compared directly
is evaluated here, by this build. Two results of different numbers versions may differ by fixes to
the harness, not by the systems (a baseline computed before 9be498f scored NDCG_exp 0.0 where 1.0 is
right: the fixed build's result read as IMPROVED), so ``compare`` and ``check`` say so, one line per
result, naming both files and both versions and how to recompute the older one with this build: a
``harness evaluate`` of the run it recorded, under its recorded cutoffs, metrics and settings. A
result that records no numbers version (written before it was recorded, or by hand) is ``unknown``
and warned about the same way. It is a warning, not a refusal: the values may well be equal.

Likewise for the libraries that computed a result's work (its embeddings, index, reranker scores: the
``*_versions`` blocks of ``retriever_stats`` and of each stage's ``stats``, which a reused cache entry fills
with the versions that computed it, not this process's): two results that record other versions of one of
them get one line per result naming the library and both versions (:func:`library_versions_warnings`).
"""

from __future__ import annotations

import shlex
from typing import Sequence

from harness.versions import NUMBERS_VERSION, known_versions


def numbers_version(system) -> int | None:
    """The numbers version a system's values were computed with: its metrics.json's
    ``versions.numbers_version``, else a bench cell's ``bench.numbers`` (recorded by cells before
    ``versions`` held it); None when neither is an integer; this build's for a run file."""
    if system.document is None:
        return NUMBERS_VERSION  # (a run file, evaluated here)
    doc = system.document
    for value in ((doc.versions or {}).get("numbers_version"), (doc.bench or {}).get("numbers")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _describe(system) -> str:
    """``NAME (PATH) NUMBERS_VERSION N (retrieval-harness V)``, "unknown" for what it does not record."""
    if system.document is None:
        from harness import __version__ as release
    else:
        release = (system.document.versions or {}).get("retrieval-harness")
        release = release if isinstance(release, str) and release else "unknown"
    number = numbers_version(system)
    return (f"{system.name} ({system.source}) NUMBERS_VERSION {number if number is not None else 'unknown'} "
            f"(retrieval-harness {release})")


def numbers_warnings(systems: Sequence) -> list[str]:
    """One warning per system whose numbers version differs from the first system's (or where either
    is unknown), naming both, with the command that recomputes each one not of this build."""
    if len(systems) < 2:
        return []
    reference, warnings = systems[0], []
    for system in systems[1:]:
        versions = numbers_version(reference), numbers_version(system)
        if None not in versions and versions[0] == versions[1]:
            continue
        stale = [s for s in (reference, system) if numbers_version(s) != NUMBERS_VERSION]
        how = "; ".join(recompute_hint(s) for s in stale) or "recompute both with one build"
        warnings.append(f"computed with different numbers versions: {_describe(reference)}, {_describe(system)}: "
                        f"values may differ by fixes to the harness, not by the systems; {how}")
    return warnings


def recompute_hint(system) -> str:
    """How to recompute a result's values with this build (NUMBERS_VERSION :data:`NUMBERS_VERSION`):
    ``harness evaluate`` of the run it recorded (on its qrels, when still found with the recorded
    sha256, else ``QRELS``), with its cutoffs, metrics and evaluation settings; or, without a run, to
    run it again."""
    name = system.name
    if system.run_path is None or system.document is None:
        return (f"recompute {name} with this build (NUMBERS_VERSION {NUMBERS_VERSION}): run it again "
                "(no run file is found beside it to evaluate again)")
    from harness.compare.load import find_qrels
    from harness.evaluation.semantics import DEFAULT_SEMANTICS

    doc = system.document
    qrels = find_qrels(system)
    command = ["harness", "evaluate", "--qrels", str(qrels) if qrels is not None else "QRELS",
               "--run", str(system.run_path)]
    k_values = [k for k in doc.k_values if isinstance(k, int) and not isinstance(k, bool)]
    if k_values:
        command += ["--k", ",".join(map(str, k_values))]
    extra = _extra_metrics(list(doc.metrics), k_values)
    if extra:
        command += ["--metric", ",".join(extra)]
    settings = doc.settings or {}
    threshold = settings.get("relevance_threshold")
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and threshold != 1:
        command += ["--relevance-threshold", repr(threshold)]  # (the shortest text that reads back as it)
    if settings.get("ignore_identical_ids") is False:
        command += ["--keep-identical-ids"]
    semantics = settings.get("semantics")
    if isinstance(semantics, str) and semantics != DEFAULT_SEMANTICS:
        command += ["--semantics", semantics]
    out = system.source.with_name(f"{system.source.stem}.recomputed.json")  # (beside it; metrics.recomputed.json)
    command += ["--json", str(out)]
    where = "" if qrels is not None else f" (QRELS: the judgments {doc.dataset.get('name')!s} was evaluated on)"
    return (f"recompute {name} with this build (NUMBERS_VERSION {NUMBERS_VERSION}): {shlex.join(command)}{where} "
            "(its recorded run; a fix to its retriever needs it run again)")


def _extra_metrics(names: list[str], k_values: list[int]) -> list[str]:
    """The metrics of ``names`` beyond BEIR's six families at ``k_values`` (what ``--metric`` adds)."""
    from harness.evaluation import DEFAULT_FAMILIES, metrics_for

    try:
        default = {m.name for m in metrics_for(list(DEFAULT_FAMILIES), k_values)}
    except ValueError:
        default = set()
    return [name for name in names if name not in default]


def computing_versions(system) -> dict[str, set[str]]:
    """Library -> the versions that computed a result's work (its embeddings, index, reranker scores, cached or
    fresh), from its metrics.json's ``retriever_stats`` and its pipeline stages' ``stats``: their ``*_versions``
    blocks (``documents_versions``, ``index_versions``, a cross-encoder's ``scores_versions``; name -> version,
    or a list of versions). A result written before they were recorded, or a run file, has none; ``unknown``
    (parts written before) is left out."""
    doc = system.document
    if doc is None:
        return {}
    blocks = [doc.retriever_stats, *(s.get("stats") for s in (doc.stages or ()) if isinstance(s, dict))]
    out: dict[str, set[str]] = {}
    for stats in blocks:
        for key, recorded in (stats.items() if isinstance(stats, dict) else ()):
            if not str(key).endswith("_versions") or not isinstance(recorded, dict):
                continue
            for name, found in recorded.items():
                if versions := known_versions(found):
                    out.setdefault(name, set()).update(versions)
    return out


def library_versions_warnings(systems: Sequence) -> list[str]:
    """One warning per system whose numbers were computed under other versions of a library than the first
    system's, for the libraries both record as computing them (:func:`computing_versions`: embeddings, an
    index, a reranker's scores), naming the library and both versions: values may differ by the libraries, not
    by the systems. Not a refusal; results that record none are not compared."""
    if len(systems) < 2:
        return []
    reference, warnings = systems[0], []
    ref = computing_versions(reference)
    for system in systems[1:]:
        found = computing_versions(system)
        changed = [f"{name} {', '.join(sorted(ref[name]))} vs {', '.join(sorted(found[name]))}"
                   for name in ref if name in found and ref[name] != found[name]]
        if changed:
            warnings.append(f"{reference.name} and {system.name} were computed under different library versions "
                            f"({'; '.join(changed)}; retriever_stats / stages[].stats *_versions): values may "
                            "differ by the libraries, not by the systems")
    return warnings
