"""Fuse runs: align their (query, document) pairs, normalise, combine, rank, cut to depth.

Queries: the union of the runs' queries, in first-seen order (run 1's, then new ones of run 2, ...);
a query a run lacks counts as retrieved nothing there (ranx requires equal query sets instead).
Documents: each run is taken in canonical order (score descending, ties by document id descending,
the evaluator's order), which gives the ranks that RRF and the ``rank`` normalisation use. The fused
run is returned in canonical order, ties by document id descending, cut to ``depth`` per query in
the evaluator's order of its ``semantics`` (``top_depth``; default trec_eval-9: fused scores equal in
float32 tie and the larger document id stays; None: the fused scores' double order). :func:`fuse`
also drops identical ids from its inputs by default: its defaults are ``harness fuse``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from harness.columns import object_array
from harness.evaluation.semantics import Semantics, top_depth
from harness.fusion.methods import COMBINERS
from harness.fusion.normalize import normalize, positions
from harness.fusion.spec import DEFAULT_DEPTH, FusionSpec
from harness.run import Run


@dataclass(frozen=True, eq=False)
class AlignedRuns:
    """Runs mapped onto one set of (query, document) pairs.

    ``pair_query``/``pair_doc`` index ``query_ids``/``doc_vocab``, sorted by query then document;
    ``pairs[r]`` is the pair index of each entry of (canonical) ``runs[r]``.
    """

    runs: tuple[Run, ...]
    query_ids: np.ndarray
    doc_vocab: np.ndarray
    pair_query: np.ndarray
    pair_doc: np.ndarray
    pairs: tuple[np.ndarray, ...]

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)


def _union_documents(runs: Sequence[Run]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct document ids the runs retrieve, and each run's entries' codes into them.

    The ids are made unique as a fixed-width unicode array (sorted in C), unless that array would
    be large (one very long id makes every cell as wide) or an id ends in NUL (numpy's unicode
    strings drop trailing NULs, which would merge ``"a\\x00"`` with ``"a"``): then as Python strings.
    """
    # (each run's codes in use, ascending: a count per code, not np.unique, whose hash-based unique took
    # 17 s for a 10M-entry run's codes under load against 0.2 s)
    used = [np.flatnonzero(np.bincount(run.doc_codes, minlength=len(run.doc_vocab))) for run in runs]
    ids = np.concatenate([run.doc_vocab[codes] for run, codes in zip(runs, used)]).tolist()
    width = max(map(len, ids), default=1) or 1
    if width * len(ids) <= 1 << 26 and not any(i.endswith("\x00") for i in ids):
        vocab, inverse = np.unique(np.array(ids, dtype=f"U{width}"), return_inverse=True)
    else:
        vocab, inverse = np.unique(object_array(ids), return_inverse=True)
    codes, start = [], 0
    for run, run_used in zip(runs, used):
        local = np.full(len(run.doc_vocab), -1, dtype=np.int64)
        local[run_used] = inverse.ravel()[start:start + len(run_used)]
        start += len(run_used)
        codes.append(local[run.doc_codes])
    return object_array(vocab.tolist()), codes


def align(runs: Sequence[Run]) -> AlignedRuns:
    """Put the canonical forms of ``runs`` on one set of (query, document) pairs."""
    runs = tuple(run.canonical() for run in runs)
    query_index: dict[str, int] = {}
    for run in runs:
        for qid in run.query_ids.tolist():
            query_index.setdefault(qid, len(query_index))
    doc_vocab, doc_codes = _union_documents(runs)
    n_docs = max(len(doc_vocab), 1)
    keys = []
    for run, codes in zip(runs, doc_codes):
        queries = np.fromiter((query_index[q] for q in run.query_ids.tolist()), dtype=np.int64, count=run.n_queries)
        keys.append(np.repeat(queries, np.diff(run.offsets)) * n_docs + codes)
    unique_keys, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    inverse = inverse.ravel()
    bounds = np.cumsum([0] + [len(k) for k in keys])
    return AlignedRuns(
        runs=runs, query_ids=object_array(query_index), doc_vocab=doc_vocab,
        pair_query=unique_keys // n_docs, pair_doc=unique_keys % n_docs,
        pairs=tuple(inverse[bounds[i]:bounds[i + 1]] for i in range(len(runs))))


def check_runs(runs, call: str) -> list[Run]:
    """``runs`` as a list, refused with a TypeError naming ``call`` unless it is a sequence of harness
    :class:`Run` values: one run, BEIR's ``{query: {doc: score}}`` dicts or a dict of named runs gave an
    AttributeError from deep inside the alignment (``'dict' object has no attribute ...``)."""
    hint = ("build each from BEIR's dict with Run.from_dict(results), or read a TREC file with "
            "harness.formats.trec.read_run(path)")
    if isinstance(runs, (Run, Mapping, str, bytes)):
        raise TypeError(f"{call} takes a list of harness Runs, got one {type(runs).__name__}: {hint}")
    runs = list(runs)
    bad = next((i for i, run in enumerate(runs) if not isinstance(run, Run)), None)
    if bad is not None:
        raise TypeError(f"{call} takes a list of harness Runs; run {bad + 1} is {type(runs[bad]).__name__}: {hint}")
    return runs


def check_spec(spec, call: str) -> FusionSpec:
    """``spec``, refused with a TypeError naming ``call`` unless it is a :class:`FusionSpec`."""
    if not isinstance(spec, FusionSpec):
        raise TypeError(f"{call} takes a FusionSpec, got {type(spec).__name__}: build it with "
                        "FusionSpec.create(method, ...) or FusionSpec.from_dict(settings)")
    return spec


def fuse_runs(runs: Sequence[Run], spec: FusionSpec, semantics: Semantics | str | None = "trec_eval-9") -> Run:
    """The fusion of ``runs`` described by ``spec`` (see ``harness.fusion.methods`` for the formulas),
    cut at ``spec.depth`` in the order of the evaluator's ``semantics`` (default ``trec_eval-9``, the
    evaluator's and ``harness fuse``'s; None: the fused scores' double order)."""
    runs, spec = check_runs(runs, "fuse_runs(runs, spec)"), check_spec(spec, "fuse_runs(runs, spec)")
    if len(runs) < 2:
        raise ValueError(f"fusion needs at least two runs, got {len(runs)}")
    weights = spec.weights_for(len(runs))
    return fuse_aligned(align(runs), spec, weights, semantics=semantics)


def contributions(aligned: AlignedRuns, spec: FusionSpec) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per run: (pair index, value) of its entries; the value is the position for RRF, else the norm."""
    if spec.method == "rrf":
        return [(pairs, positions(run)) for run, pairs in zip(aligned.runs, aligned.pairs)]
    return [(pairs, normalize(run, spec.norm)) for run, pairs in zip(aligned.runs, aligned.pairs)]


def fuse_aligned(aligned: AlignedRuns, spec: FusionSpec, weights: Sequence[float],
                 parts: list[tuple[np.ndarray, np.ndarray]] | None = None,
                 semantics: Semantics | str | None = None) -> Run:
    """Combine aligned runs (``parts``: their :func:`contributions`, when the caller has them), cut
    at ``spec.depth`` in the order of ``semantics`` (:func:`~harness.evaluation.semantics.top_depth`).

    Infinite input scores (a TREC run may hold ``inf``), or finite ones that overflow to infinity in
    the normalisation (``max - min`` of 1e308 and -1e308), can make a fused score NaN (``inf - inf``
    in min-max, ``inf + -inf`` in a sum): that is refused with a ValueError naming the cause. A score
    that only overflows to ±inf is kept (as in ranx), without a numpy warning.
    """
    combine = COMBINERS[spec.method]
    extra = {"k": spec.k} if spec.method == "rrf" else {}
    with np.errstate(invalid="ignore", over="ignore"):
        parts = contributions(aligned, spec) if parts is None else parts
        scores = combine(aligned.n_pairs, parts, weights, **extra)
    if np.isnan(scores).any():
        raise ValueError(f"fusion ({spec.method}, norm {spec.norm}) gives NaN scores: an input run has an infinite "
                         "score, or scores so large that they overflow to infinity in this normalisation or method "
                         "(beyond about 1e308), which it cannot combine (norm rank or method rrf can)")
    counts = np.bincount(aligned.pair_query, minlength=len(aligned.query_ids))
    fused = Run(aligned.query_ids, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                aligned.pair_doc, scores, aligned.doc_vocab)
    return top_depth(fused, spec.depth, semantics)


def fuse(runs: Sequence[Run], method: str = "rrf", norm: str | None = None, k: int | None = None,
         weights: Sequence[float] | None = None, depth: int = DEFAULT_DEPTH,
         semantics: Semantics | str | None = "trec_eval-9", keep_identical_ids: bool = False) -> Run:
    """Fuse ``runs`` with ``method`` after the ``norm`` normalisation (default: ``none`` for RRF,
    ``min-max`` otherwise); ``k`` for RRF (60), ``weights`` for RRF / wsum; ``depth`` per query, cut in
    the order of ``semantics`` (see :func:`fuse_runs`). As ``harness fuse`` (same defaults, same run):
    hits whose document id equals their query id are dropped from the inputs first, as the evaluator
    drops them (else they take depth slots of documents it counts), unless ``keep_identical_ids``.

    >>> fused = fuse([bm25_run, dense_run], "rrf", k=60)
    """
    runs = check_runs(runs, "fuse(runs, ...)")
    spec = FusionSpec.create(method, norm, k, weights, depth)
    if not keep_identical_ids:
        runs = [run.without_identical_ids() for run in runs]
    return fuse_runs(runs, spec, semantics)
