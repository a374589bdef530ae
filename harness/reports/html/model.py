"""What the HTML report shows, computed from result folders (no HTML here; see :mod:`.render`).

Per dataset (the systems evaluated on it, aligned on their queries, :func:`harness.compare.align`):

* each (system, metric) cell: the mean over the queries and its percentile bootstrap interval
  (:func:`harness.compare.significance.bootstrap_means`, every column resampled with the same
  queries); the best mean of the row is marked;
* groups of systems that are not significantly different: every pair of systems is tested (the
  chosen paired test, as ``harness compare``), the p-values of the n(n-1)/2 pairs are
  Holm-adjusted, and :func:`~harness.compare.significance.rank_groups` splits the ranking into
  maximal runs of consecutive ranks without a significant pair, lettered a, b, c...;
* every system against the baseline: difference, paired bootstrap interval of the mean per-query
  difference (:func:`~harness.compare.significance.paired_bootstrap_ci` on ``d = system - baseline``,
  as :func:`harness.compare.compare`; not the differences of the cells' resampled means, whose
  rounding can differ in the last bit, e.g. a bound of -1.1e-16 shown as -0.0000 where every
  difference is >= 0), the chosen test's p-value Holm-adjusted across the systems; the numbers
  ``harness compare`` prints;
* trec_eval's counts ``num_ret``, ``num_rel`` and ``num_nonrel_judged_ret`` (:mod:`harness.compare.measures`)
  have their means and intervals only: no best, no groups, no row against the baseline; the explorer shows
  their per-query differences uncoloured and filters them as lower / higher, not worse / better;
* the per-query values, query texts, judged documents with grades and each system's top k, for
  the explorer.

The average row is the unweighted mean over datasets, for systems with a value on every dataset;
its interval resamples every dataset's queries independently (a stratified bootstrap) and averages
the resampled dataset means.

A dataset of forums (CQADupStack: results of ``cqadupstack/<forum>``, all its forums there) is one
leaderboard row, as BEIR reports it (:class:`ForumsRow`): the unweighted mean of its forums' means, for
systems with a value on every forum the registry lists, its interval the mean of the forums' independent
resamplings; the average row counts it once. Each forum keeps its own section (forums table, plots,
explorer). Some forums only are rows of their own; but in a benchmark's page, whose config asked for every
forum, a forum without results (its cells failed) leaves the row without a value, as in leaderboard.json.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Sequence

import numpy as np

from harness.compare import Settings, SystemResult, align
from harness.compare.analysis import near_alpha_warning, same_mean
from harness.compare.load import find_qrels, resolve_metrics
from harness.compare.measures import ranks_systems
from harness.compare.plots import curves
from harness.compare.significance import (bootstrap_means, holm_bonferroni, holm_standard_errors, near_alpha,
                                          paired_bootstrap_ci, paired_t_test, percentile_interval, randomization_test,
                                          rank_groups, significant)
from harness.errors import HarnessError
from harness.evaluation.evaluator import finite_mean

DEFAULT_METRICS = ("NDCG@10", "Recall@100", "MRR@10")
SNIPPET = 120  # characters of text shown for a document without a title


# ------------------------------------------------------------------------------ metrics.json fields
@dataclass
class ResultInfo:
    """What the report reads from one result's metrics.json beyond the per-query values."""

    dataset: str | None = None
    split: str | None = None
    files: dict = field(default_factory=dict)
    n_queries: int | None = None
    retriever: str | None = None
    params: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    k_values: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    efficiency: dict = field(default_factory=dict)
    fingerprint: str | None = None
    versions: dict = field(default_factory=dict)
    created: str | None = None
    warnings: list = field(default_factory=list)  # its ``warnings`` (the str ones)


def result_info(system: SystemResult) -> ResultInfo:
    """The only place that reads metrics.json keys: from ``system.document`` as JSON (the parsed
    object, or a typed document's ``to_json()``), so unknown blocks such as ``efficiency`` are read too."""
    doc = system.document
    if not isinstance(doc, dict):
        to_json = getattr(doc, "to_json", None)
        doc = to_json() if callable(to_json) else {}

    def block(obj, key) -> dict:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, dict) else {}

    dataset, retriever = block(doc, "dataset"), block(doc, "retriever")
    return ResultInfo(
        dataset=dataset.get("name"), split=dataset.get("split"), files=block(dataset, "files"),
        n_queries=_count(dataset.get("n_queries")), retriever=retriever.get("name"), params=block(retriever, "params"),
        settings=block(doc, "settings"), k_values=list(doc.get("k_values") or []), timings=block(doc, "timings"),
        efficiency=block(doc, "efficiency"), fingerprint=block(doc, "bench").get("fingerprint"),
        versions=block(doc, "versions"), created=doc.get("created"),
        warnings=[w for w in listed if isinstance(w, str)] if isinstance(listed := doc.get("warnings"), list) else [])


def _count(value) -> int | None:
    """A count from a (possibly hand-edited) metrics.json: an integer, else None (not known)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def dataset_label(info: ResultInfo) -> str:
    """The leaderboard row of a result: its dataset name, with the split when it is not ``test``."""
    name = info.dataset or "unknown dataset"
    return name if info.split in (None, "test") else f"{name} ({info.split})"


# ------------------------------------------------------------------------------ dataset resources
@dataclass
class Judgments:
    """Judged documents per query and document titles (either may be missing)."""

    qrels: dict[str, dict[str, float]] | None = None
    titles: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _corpus_titles(path: Path, wanted: set[str]) -> dict[str, str]:
    """Title (or, without one, the start of the text) of the ``wanted`` documents: the corpus read as a run
    reads it (:func:`harness.datasets.beir.load_corpus`: a corpus of 32 MiB or more is the corpus cache's
    memory-mapped Arrow file), the wanted rows picked in Arrow; Python strings only for those. (It was read
    line by line with ``json.loads``: ~5 s of a benchmark's report.html at 1M documents.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    from harness.datasets.beir import load_corpus

    if not wanted:
        return {}
    table = load_corpus(path).table
    ids = table.column("_id")
    chosen = table.filter(pc.is_in(ids, value_set=pa.array(sorted(wanted), ids.type)))
    titles = {}
    for doc_id, title, text in zip(*(chosen.column(name).to_pylist() for name in ("_id", "title", "text"))):
        title = (title or "").strip()
        if not title:
            text = " ".join((text or "").split())
            title = text if len(text) <= SNIPPET else text[:SNIPPET - 1] + "…"
        titles[doc_id] = title
    return titles


def load_judgments(system: SystemResult, info: ResultInfo, source: str | None, wanted_docs) -> Judgments:
    """Qrels and titles for a dataset: from ``source`` (a folder or dataset name, e.g. ``--dataset``),
    else from the dataset the result records (bundled, downloaded, or the qrels file it names, when
    its sha256 is unchanged). Nothing is downloaded; what cannot be found becomes a warning."""
    from harness.checksums import sha256
    from harness.datasets.beir import find_file
    from harness.formats.trec import read_qrels

    out = Judgments()
    split = info.split or "test"
    qrels_path = corpus_path = None
    name = source or info.dataset
    recorded = info.files.get(f"qrels/{split}.tsv")
    try:
        if name and not name.startswith("hf:"):
            folder = _dataset_folder(name, split, recorded)
            corpus_path = find_file(folder, "corpus.jsonl")
            own = folder / "qrels" / f"{split}.tsv"
            if source:
                qrels_path = own
                if recorded and qrels_path.is_file() and sha256(qrels_path) != recorded:
                    out.warnings.append(f"{qrels_path} differs from the qrels the results were evaluated on "
                                        "(sha256); grades shown may not match the metrics")
            elif recorded and own.is_file() and sha256(own) == recorded:
                qrels_path = own  # (the recorded dataset, found as _dataset_folder finds it, not anew by find_qrels)
    except HarnessError as exc:  # (a result made from a folder records its name only: --dataset NAME=FOLDER)
        out.warnings.append(f"no document titles: {exc}" + ("" if source else " (give the dataset with --dataset)"))
    qrels_path = qrels_path or find_qrels(system)
    try:
        if qrels_path is not None:
            out.qrels = read_qrels(qrels_path).to_dict()
        else:
            out.warnings.append("no judgments: the qrels the results were evaluated on were not found "
                                "(give the dataset with --dataset)")
        if corpus_path is not None:
            wanted = set(wanted_docs()) | {d for docs in (out.qrels or {}).values() for d in docs}
            out.titles = _corpus_titles(corpus_path, wanted)
    except HarnessError as exc:
        out.warnings.append(f"judgments or titles unavailable: {exc}")
    return out


def _dataset_folder(name: str, split: str, recorded: str | None) -> Path:
    """The folder of dataset ``name`` (:func:`harness.datasets.resolve`: a folder of that name in the current
    directory first). A folder there without ``qrels/<split>.tsv`` is no dataset but a results folder named like
    it (``harness run -o .`` writes ``./scifact/bm25``; a benchmark's folder holds ``scifact/``, and the report
    run from there found no judgments or titles): then the bundled or downloaded dataset of that name, when it
    holds those qrels (with the ``recorded`` sha256 where the results record one)."""
    import os

    from harness.checksums import sha256
    from harness.datasets import BUNDLED, resolve
    from harness.datasets import download as dl

    _, folder = resolve(name, download=False, split=split)
    qrels = Path("qrels") / f"{split}.tsv"
    if not Path(os.path.expanduser(name)).is_dir() or (folder / qrels).is_file():
        return folder
    try:
        others = [BUNDLED / name, *([dl.dataset_dir(name)] if dl.is_downloaded(name) else [])]
    except HarnessError:  # (a name no registered dataset has)
        others = [BUNDLED / name]
    for other in others:
        if (other / qrels).is_file() and (recorded is None or sha256(other / qrels) == recorded):
            return other
    return folder


# ------------------------------------------------------------------------------ statistics
def _printed(v: float, digits: int):
    """``v`` rounded to ``digits`` decimals as Python prints it (``f"{v:.4f}"``), an int when integral; values past
    2^52 (no decimals to round: DCG_exp values near 2^1023) and non-finite ones as they are."""
    if abs(v) >= 2.0**52 or not math.isfinite(v):
        return v
    rounded = float(f"{v:.{digits}f}")
    return int(rounded) if rounded.is_integer() else rounded


def _rounded(values: np.ndarray, digits: int = 4) -> list:
    """Compact JSON numbers: each :func:`_printed`, as the tables and :func:`_differences` round (numpy's round
    scales by 10^digits first, and AP 0.00125, a double just above the half, was shown 0.0012 beside a table's
    0.0013); integral values as ints (0 and 1 are most of them), values past 2^52 written as floats
    (8.98846567431158e+307)."""
    return [_printed(v, digits) for v in values.tolist()]


def _differences(values: np.ndarray, digits: int = 4) -> list:
    """Per-query differences ``system - baseline`` (computed from the full values, as ``harness compare``'s
    W/T/L and Δ) as the explorer shows them: each :func:`_printed` (the difference of two values rounded to 4
    decimals can be off by one in the last digit: MRR 1/3 - 1/6 = 0.16667 was shown +0.1666); a non-zero
    difference that rounds to 0 kept as it is, so that its sign (a win or a loss, as W/T/L counts it, not a tie)
    survives."""
    return [d if d != 0 and _printed(d, digits) == 0 else _printed(d, digits) for d in values.tolist()]


def _letters(count: int) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return [alphabet[i] if i < 26 else f"{alphabet[i // 26 - 1]}{alphabet[i % 26]}" for i in range(count)]


def pair_p_values(columns: list[np.ndarray], settings: Settings,
                  draws: dict[tuple[int, int], int | None] | None = None) -> dict[tuple[int, int], float]:
    """Raw two-sided p-value of the chosen paired test (as ``harness compare``) for every pair i < j.

    ``draws``, when given, receives each pair's random sign vectors (None where the p is exact: the t-test,
    or every sign flip counted)."""
    p = {}
    for i in range(len(columns)):
        for j in range(i + 1, len(columns)):
            if settings.test == "t":
                p[(i, j)], n = paired_t_test(columns[i], columns[j]).p_value, None
            else:
                r = randomization_test(columns[i], columns[j], permutations=settings.permutations, seed=settings.seed)
                p[(i, j)], n = r.p_value, None if r.exact else r.n_permutations
            if draws is not None:
                draws[(i, j)] = n
    return p


def pairwise_different(columns: list[np.ndarray], p: dict[tuple[int, int], float], alpha: float) -> np.ndarray:
    """n x n: whether systems i and j differ significantly (Holm-adjusted over all the pairs)."""
    n = len(columns)
    different = np.zeros((n, n), dtype=bool)
    for (i, j), q in zip(p, holm_bonferroni(list(p.values())).tolist()):
        different[i, j] = different[j, i] = significant(q, alpha) and finite_mean(columns[i]) != finite_mean(columns[j])
    return different


@dataclass
class DatasetSection:
    label: str
    systems: list[str]
    baseline: str
    n_queries: int
    cells: dict  # metric -> system -> {mean, low, high, groups, best}
    versus: list  # rows of the comparison with the baseline
    curves: dict  # family -> [(k, {system: mean})]
    deltas: dict  # (system, metric) -> per-query differences against the baseline
    explorer: dict  # compact per-query data (see explorer_data)
    efficiency: list  # [(system, {column: value})]
    warnings: list[str]
    resampled: dict  # (system, metric) -> bootstrap means (for the average row)


def _efficiency(info: ResultInfo) -> dict:
    """Timings (``timings`` block, queries/s derived) and any ``efficiency`` block, flattened."""
    row = {}
    for key, value in info.timings.items():
        if isinstance(value, (int, float)):
            row[key] = value
    search = info.timings.get("search_s")
    if isinstance(search, (int, float)) and search > 0 and info.n_queries:
        row["queries_per_s"] = info.n_queries / search
    for key, value in _flatten(info.efficiency).items():
        row[key] = value
    return row


def _flatten(obj: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in obj.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out


def dataset_section(label: str, systems: list[SystemResult], metrics: list[str], baseline: str | None,
                    settings: Settings, top_k: int, source: str | None, intersection: bool) -> DatasetSection:
    names = [s.name for s in systems]
    aligned = align(systems, metrics, intersection=intersection)
    warnings = list(aligned.warnings)
    base = baseline if baseline in names else names[0]
    if baseline is not None and baseline not in names:
        warnings.append(f"baseline {baseline!r} has no result on {label}: {base} is the baseline here")
    columns = [aligned.of(n, m) for m in metrics for n in names]
    resampled = bootstrap_means(np.column_stack(columns), settings.resamples, settings.seed)
    cells: dict = {}
    draws = {}
    for c, (metric, name) in enumerate((m, n) for m in metrics for n in names):
        ci = percentile_interval(resampled[:, c], settings.confidence, settings.seed)
        cells.setdefault(metric, {})[name] = {"mean": finite_mean(aligned.of(name, metric)),
                                              "low": ci.low, "high": ci.high}
        draws[(name, metric)] = resampled[:, c]
    versus, deltas = [], {}
    b = names.index(base)
    others = [i for i in range(len(names)) if i != b]
    for metric in metrics:
        row = cells[metric]
        top = max(v["mean"] for v in row.values())
        for v in row.values():
            v["best"] = same_mean(v["mean"], top) and len(row) > 1 and ranks_systems(metric)
        if not ranks_systems(metric):  # a count (num_ret, num_rel): its means only, as harness compare shows it
            continue
        values = [aligned.of(n, metric) for n in names]
        drawn: dict[tuple[int, int], int | None] = {}
        p = pair_p_values(values, settings, drawn)
        groups = rank_groups([row[n]["mean"] for n in names], pairwise_different(values, p, settings.alpha)) \
            if len(names) > 1 else []
        if len(names) > 2:  # (with two systems the one pair is the baseline's, warned of below)
            every = holm_bonferroni(list(p.values())).tolist()
            for (i, j), q, e in zip(p, every, holm_standard_errors(list(p.values()), list(drawn.values())).tolist()):
                if finite_mean(values[i]) != finite_mean(values[j]) and near_alpha(q, e, settings.alpha):
                    warnings.append(near_alpha_warning(
                        f"{names[i]} and {names[j]}, {metric}", q, e, settings.permutations, settings.alpha,
                        f"Holm-adjusted over the {len(p)} pairs", "whether they share a group letter"))
        for letter, group in zip(_letters(len(groups)), groups):
            for i in group:
                row[names[i]]["groups"] = row[names[i]].get("groups", "") + letter
        # Against the baseline: harness compare's family (Holm over the other systems) and its interval,
        # computed as compare computes it (the same draws; the same arithmetic, so the same digits).
        pairs = [(min(i, b), max(i, b)) for i in others]
        adjusted = holm_bonferroni([p[pair] for pair in pairs])
        se = holm_standard_errors([p[pair] for pair in pairs], [drawn[pair] for pair in pairs])
        for i, q, e in zip(others, adjusted.tolist(), se.tolist()):
            d = values[i] - values[b]
            if finite_mean(d) != 0 and near_alpha(q, e, settings.alpha):  # (as harness compare warns)
                warnings.append(near_alpha_warning(f"{names[i]} vs {base}, {metric}", q, e, settings.permutations,
                                                   settings.alpha, adjusted=len(others) > 1))
            ci = paired_bootstrap_ci(values[b], values[i], settings.resamples, settings.confidence, settings.seed)
            versus.append({"system": names[i], "metric": metric, "difference": finite_mean(d), "low": ci.low,
                           "high": ci.high, "p_holm": q, "significant": significant(q, settings.alpha) and finite_mean(d) != 0,
                           "wins": int((d > 0).sum()), "ties": int((d == 0).sum()), "losses": int((d < 0).sum())})
            deltas[(names[i], metric)] = d
    info = result_info(systems[0])
    explorer = explorer_data(label, aligned, base, top_k, systems, info, source, warnings)
    return DatasetSection(label=label, systems=names, baseline=base, n_queries=len(aligned.query_ids), cells=cells,
                          versus=versus, curves=curves(systems), deltas=deltas, explorer=explorer,
                          efficiency=[(s.name, _efficiency(result_info(s))) for s in systems], warnings=warnings,
                          resampled=draws)


def _top_codes(system: SystemResult, query_ids: list[str], k: int, vocabulary: dict[str, int],
               warnings: list[str]) -> list[list[int]] | None:
    """Each query's first ``k`` documents as codes into ``vocabulary`` (extended as needed); None
    without a ranking. Columnar: the entries are taken from the run's arrays at once and only the
    distinct documents are looked up."""
    try:
        run = system.ranked()  # the ranking the values were computed on
    except HarnessError as exc:  # a broken run.trec only costs the rankings
        warnings.append(f"rankings of {system.name} unavailable: {exc}")
        return None
    if run is None:
        return None
    position = {q: i for i, q in enumerate(run.query_ids.tolist())}
    rows = np.fromiter((position.get(q, -1) for q in query_ids), dtype=np.int64, count=len(query_ids))
    present = rows >= 0
    starts = np.where(present, run.offsets[rows], 0)
    lengths = np.where(present, np.minimum(k, run.offsets[rows + 1] - run.offsets[rows]), 0)
    before = np.cumsum(lengths) - lengths
    entries = np.arange(int(lengths.sum())) - np.repeat(before, lengths) + np.repeat(starts, lengths)
    distinct, inverse = np.unique(run.doc_codes[entries], return_inverse=True)
    codes = np.array([vocabulary.setdefault(d, len(vocabulary)) for d in run.doc_vocab[distinct].tolist()],
                     dtype=np.int64)[inverse].tolist()
    return [codes[b:b + n] for b, n in zip(before.tolist(), lengths.tolist())]


def _negative_grade_judged(systems: list[SystemResult]) -> bool:
    """Whether a negative grade counts as judged under the semantics the values were computed under (the
    systems of a dataset share them: :func:`harness.compare.align` refuses mixed ones): yes under
    trec_eval-9 (and for results that record none), no under trec_eval-10, whose ``unj`` counts a document
    with a negative qrels grade as unjudged (its ``te_form_res_rels``: RELVALUE_UNJUDGED), as Judged@k does;
    the explorer marks and counts unjudged documents by the same rule."""
    from harness.compare.semantics import recorded_semantics
    from harness.evaluation.semantics import DEFAULT_SEMANTICS, SEMANTICS

    name = next((n for n in map(recorded_semantics, systems) if n), None)
    return SEMANTICS.get(name, SEMANTICS[DEFAULT_SEMANTICS]).negative_grade_judged


def explorer_data(label: str, aligned, baseline: str, top_k: int, systems: list[SystemResult], info: ResultInfo,
                  source: str | None, warnings: list[str]) -> dict:
    """Per-query data for the explorer, compact: documents interned into one list per dataset; ``counts``: per
    metric, whether it is a count (``num_ret``: :func:`~harness.compare.measures.ranks_systems`), whose
    differences the explorer shows as neither better nor worse; ``deltas``: per system (None for the baseline)
    and metric, each query's difference to the baseline (:func:`_differences`), which the explorer shows, filters
    and sorts by (not the difference of the rounded ``values``)."""
    query_ids = aligned.query_ids.tolist()
    texts: dict[str, str] = {}
    for s in systems:
        texts = s.query_texts()
        if texts:
            break
    docs: dict[str, int] = {}
    top = [_top_codes(s, query_ids, top_k, docs, warnings) for s in systems]
    judgments = load_judgments(systems[0], info, source, lambda: list(docs))
    warnings.extend(judgments.warnings)
    judged = None
    if judgments.qrels is not None:
        judged = []
        for q in query_ids:
            pairs = sorted((judgments.qrels.get(q) or {}).items(), key=lambda item: (-item[1], item[0]))
            judged.append([x for d, g in pairs for x in (docs.setdefault(d, len(docs)),
                                                          int(g) if float(g).is_integer() else g)])
    doc_ids = list(docs)
    return {"label": label, "baseline": [s.name for s in systems].index(baseline),
            "negative_unjudged": not _negative_grade_judged(systems),
            "systems": [s.name for s in systems], "metrics": aligned.metrics,
            "counts": [not ranks_systems(m) for m in aligned.metrics], "queries": query_ids,
            "texts": [texts.get(q, "") for q in query_ids],
            "values": [[_rounded(aligned.of(s.name, m)) for m in aligned.metrics] for s in systems],
            "deltas": [None if s.name == baseline else
                       [_differences(aligned.of(s.name, m) - aligned.of(baseline, m)) for m in aligned.metrics]
                       for s in systems],
            "docs": doc_ids, "titles": [judgments.titles.get(d, "") for d in doc_ids] if judgments.titles else None,
            "judged": judged, "top": top, "top_k": top_k}


# ------------------------------------------------------------------------------ the whole report
@dataclass
class ForumsRow:
    """A dataset of forums as one leaderboard row: ``cells`` and ``resampled`` as a section's (means,
    intervals; the bootstrap means for the average row), for the systems with a value on all ``of`` forums."""

    label: str
    title: str
    of: int
    forums: list[str]  # the labels of its forum sections, in report order
    systems: list[str]
    cells: dict
    resampled: dict
    n_queries: int


def forum_rows(sections: list[DatasetSection], sources: dict[str, str], metrics: list[str], systems: list[str],
               confidence: float, seed: int, listed: Collection[str] = ()) -> tuple[list, dict[str, ForumsRow]]:
    """The leaderboard's rows: each section, but the forums of a dataset of forums, when all its forums are
    there, as one :class:`ForumsRow` (where its first forum is); and those rows by name. Some forums only
    stay rows of their own, except for a dataset of ``listed`` (a bench config's, which asked for every forum:
    :func:`harness.bench.leaderboard.forum_groups`): a forum without results there is a failed cell, and the
    row is still one, without a value (as leaderboard.json's), not the other forums counted as datasets."""
    from harness.datasets.registry import forum_of, lookup

    found = {s.label: forum_of(sources.get(s.label) or s.label) for s in sections}  # (dataset, forum) or None
    members: dict[str, list[DatasetSection]] = {}
    for section in sections:
        if found[section.label] is not None:
            members.setdefault(found[section.label][0], []).append(section)
    groups = {}
    for name, parts in members.items():
        info = lookup(name)
        complete = {found[p.label][1] for p in parts} == set(info.subsets) and len(parts) == len(info.subsets)
        if not complete and name not in listed:
            continue  # (some forums only: each is a dataset of its own, as in the bench leaderboard)
        draws: dict = {}
        cells = average_row(parts, metrics, systems, confidence, seed, draws) if complete else \
            {metric: {} for metric in metrics}  # (a forum's cell failed: no system has a value on every forum)
        groups[name] = ForumsRow(label=name, title=info.title, of=len(info.subsets), forums=[p.label for p in parts],
                                 systems=[n for n in systems if n in cells[metrics[0]]], cells=cells,
                                 resampled=draws, n_queries=sum(p.n_queries for p in parts))
    rows, placed = [], set()
    for section in sections:
        name = found[section.label][0] if found[section.label] is not None else None
        if name not in groups:
            rows.append(section)
        elif name not in placed:
            placed.add(name)
            rows.append(groups[name])
    return rows, groups


@dataclass
class Report:
    title: str
    metrics: list[str]
    systems: list[str]
    baseline: str
    settings: Settings
    datasets: list[DatasetSection]
    average: dict  # metric -> system -> {mean, low, high, best}
    results: list[dict]  # settings and fingerprints of every result
    top_k: int
    rows: list = field(default_factory=list)  # the leaderboard's rows: DatasetSection or ForumsRow
    forums: dict = field(default_factory=dict)  # name -> ForumsRow (a dataset of forums)
    without_results: list = field(default_factory=list)  # a benchmark's rows no result reached (failed cells)
    systems_without_results: list = field(default_factory=list)  # a benchmark's columns no result reached
    warnings: list = field(default_factory=list)  # the page's own (beside each dataset's): rows_warnings


def average_row(sections: list, metrics: list[str], systems: list[str], confidence: float,
                seed: int, draws_out: dict | None = None) -> dict:
    """metric -> system -> the unweighted mean over ``sections`` (and its interval), for the systems with a
    value on every one; ``draws_out`` receives each (system, metric)'s resampled means of that mean."""
    out: dict = {}
    for metric in metrics:
        row = {}
        for name in systems:
            if not all(name in s.systems for s in sections):
                continue
            # Datasets of equal size drew the same query positions (same seed): pairing the k-th
            # dataset's draws in a random order (seeded) makes the datasets' resamplings independent.
            parts = []
            for k, section in enumerate(sections):
                draws = section.resampled[(name, metric)]
                parts.append(draws[np.random.default_rng(seed + k).permutation(len(draws))] if k else draws)
            parts = np.array(parts)
            top = float(np.abs(parts).max())  # resampled means near 2^1023 (DCG_exp) would sum to inf:
            scale = 2.0 ** -math.frexp(top)[1] if top > 2.0**500 else 1.0  # average them scaled (exact)
            mean_draws = np.mean(parts * scale, axis=0) / scale
            if draws_out is not None:
                draws_out[(name, metric)] = mean_draws
            ci = percentile_interval(mean_draws, confidence, seed)
            row[name] = {"mean": finite_mean(np.array([s.cells[metric][name]["mean"] for s in sections])),
                         "low": ci.low, "high": ci.high}
        if row:
            top = max(v["mean"] for v in row.values())
            for v in row.values():
                v["best"] = same_mean(v["mean"], top) and len(row) > 1 and ranks_systems(metric)
        out[metric] = row
    return out


ROW_SETTINGS = ("relevance_threshold", "ignore_identical_ids", "depth")  # settings that change a row's numbers


def _setting_text(value) -> str:
    """A recorded setting as a warning shows it: a number by value (1 and 1.0 are one threshold: ``1``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.12g}"
    return repr(value)


def rows_warnings(groups: dict[str, list[SystemResult]]) -> list[str]:
    """One warning per way the datasets' results were computed differently from one dataset to another:
    trec_eval semantics, numbers version (:mod:`harness.compare.provenance`), relevance threshold,
    identical-id rule, depth. Within a dataset, mixed semantics are refused and the others warned about
    (:func:`harness.compare.align`); across datasets each row is still a fair comparison of its systems, but
    the average row averages values computed under different rules (a trec_eval-9 row with a trec_eval-10
    one), which the page and stderr then say rather than average them silently."""
    from harness.compare.load import _settings
    from harness.compare.provenance import numbers_version
    from harness.compare.semantics import recorded_semantics

    if len(groups) < 2:
        return []
    facts: dict[str, dict[str, list]] = {"semantics": {}, "numbers versions": {}}
    for label, systems in groups.items():
        facts["semantics"][label] = sorted({n for n in map(recorded_semantics, systems) if n})
        facts["numbers versions"][label] = sorted({str(v) if v is not None else "unknown"
                                                  for v in map(numbers_version, systems)})
        for key in ROW_SETTINGS:
            recorded = (_settings(s).get(key) for s in systems)
            facts.setdefault(key, {})[label] = sorted({_setting_text(v) for v in recorded if v is not None})
    out = []
    for what, rows in facts.items():
        known = {label: values for label, values in rows.items() if values}
        if len({tuple(values) for values in known.values()}) > 1:
            listed = "; ".join(f"{label}: {', '.join(values)}" for label, values in known.items())
            out.append(f"the datasets were evaluated with different {what} ({listed}): the average row averages "
                       "values computed under different rules")
    return out


def result_rows(groups: dict[str, list[SystemResult]]) -> list[dict]:
    rows = []
    for label, systems in groups.items():
        for s in systems:
            info = result_info(s)
            rows.append({"dataset": label, "system": s.name, "source": str(s.source), "retriever": info.retriever,
                         "params": info.params, "settings": info.settings, "k_values": info.k_values,
                         "fingerprint": info.fingerprint, "files": info.files, "versions": info.versions,
                         "created": info.created})
    return rows


def choose_metrics(groups: dict[str, list[SystemResult]], metrics: Sequence[str] | None) -> list[str]:
    """``metrics`` as the results name them: a name every result has as given, else the evaluator's names
    of the metrics it spells (``nDCG@10``, ``ndcg_cut_10``: ``NDCG@10``; ``iprec_at_recall``: its 11
    levels; as compare and check read them, :func:`~harness.compare.load.resolve_metrics`, which names a
    result without one); the defaults that every result has without ``metrics``."""
    everyone = [s for systems in groups.values() for s in systems]
    if metrics:
        return resolve_metrics(metrics, everyone)
    chosen = [m for m in DEFAULT_METRICS if all(m in s.values for s in everyone)]
    if not chosen:
        raise HarnessError(f"none of the default metrics ({', '.join(DEFAULT_METRICS)}) is in every result; "
                           "choose with --metric")
    return chosen


def build_report(groups: dict[str, list[SystemResult]], metrics: Sequence[str] | None = None,
                 baseline: str | None = None, settings: Settings | None = None, top_k: int = 10,
                 sources: dict[str, str] | None = None, intersection: bool = False,
                 title: str = "Retrieval report", listed_forums: Collection[str] = (),
                 listed_rows: Sequence[str] = (), listed_systems: Sequence[str] = ()) -> Report:
    """The report of ``groups`` (dataset label -> the systems evaluated on it, in column order);
    ``listed_forums``: the datasets of forums whose every forum was asked for (:func:`forum_rows`);
    ``listed_rows``: a benchmark's leaderboard rows (leaderboard.json's ``datasets``): one that no result
    reached (every cell of it failed) leaves the average row without a value, as in leaderboard.json,
    rather than an average over the other datasets; ``listed_systems``: a benchmark's columns
    (leaderboard.json's ``retrievers``), the page's first columns in that order: one that no result reached
    (every cell of it failed) is a column of '-', as in leaderboard.json (the default baseline is the first
    column with results; one without any is no baseline)."""
    settings = settings or Settings()
    groups = {label: list(systems) for label, systems in groups.items() if systems}
    if not groups:
        raise HarnessError("nothing to report: no results")
    if top_k < 1:
        raise HarnessError(f"--top-k must be >= 1, got {top_k}")
    for label, systems in groups.items():
        seen: dict[str, SystemResult] = {}
        for s in systems:
            if s.name in seen:
                raise HarnessError(f"{label}: two results are both named {s.name!r} ({seen[s.name].source} and "
                                   f"{s.source}); name them with NAME=PATH")
            seen[s.name] = s
    metrics = choose_metrics(groups, metrics)
    found = list(dict.fromkeys(s.name for group in groups.values() for s in group))
    systems = [*(n for n in listed_systems if n in found), *(n for n in found if n not in listed_systems)]
    failed = [n for n in dict.fromkeys(listed_systems) if n not in found]
    if baseline is not None and baseline in failed:
        raise HarnessError(f"baseline {baseline!r} has no results (every cell of it failed); choose one of "
                           f"{', '.join(systems)}")
    if baseline is not None and baseline not in systems:
        raise HarnessError(f"baseline {baseline!r} is not one of the systems ({', '.join(systems)})")
    chosen, baseline = baseline, baseline or systems[0]
    columns = list(dict.fromkeys([*listed_systems, *systems]))  # (the leaderboard's order, failed ones too)
    sources = sources or {}
    # A dataset without the baseline has its first system as its own: warned of when --baseline named it, not
    # when the baseline is the default (the first system, which other datasets may simply not have).
    sections = [dataset_section(label, group, metrics,
                                baseline if chosen is not None or any(s.name == baseline for s in group) else None,
                                settings, top_k, sources.get(label), intersection)
                for label, group in groups.items()]
    rows, forums = forum_rows(sections, sources, metrics, systems, settings.confidence, settings.seed,
                              listed_forums)
    present = {row.label for row in rows}
    missing = [label for label in listed_rows if label not in present]
    average = average_row(rows, metrics, systems, settings.confidence, settings.seed) if not missing else \
        {metric: {} for metric in metrics}  # (no system has a value on every dataset)
    return Report(title=title, metrics=metrics, systems=columns, baseline=baseline, settings=settings,
                  datasets=sections, average=average, results=result_rows(groups), top_k=top_k, rows=rows,
                  forums=forums, without_results=missing, systems_without_results=failed,
                  warnings=rows_warnings(groups))
