"""One experiment: index and search a loaded dataset with a retriever, evaluate, report."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from harness import progress
from harness.columns import object_array
from harness.datasets import Dataset
from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from harness.evaluation import EvaluationResult, Evaluator, default_depth, depth_warning
from harness.evaluation.semantics import Semantics, parse_semantics, top_depth
from harness.reports import MetricsDocument, efficiency, write_result_folder
from harness.reports.document import plain_json
from harness.retriever import Retriever, count
from harness.run import Run, concat_runs
from harness.versions import reused_versions_warning

SEARCH_BATCH = Retriever.search_batch_size  # queries per timed search() call (docs/efficiency.md)
MAX_TIMED_CALLS = 50  # larger batches beyond 50 x SEARCH_BATCH queries: bounds the per-call overhead


@dataclass
class Timer:
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = time.perf_counter() - start


@dataclass
class Experiment:
    dataset: Dataset
    run: Run
    result: EvaluationResult
    document: MetricsDocument
    folder: Path | None = None


def dataset_info(dataset: Dataset) -> dict:
    """metrics.json's ``dataset`` block: name, split, the files read (``files``), their content's identity
    (``content``; a dataset built in Python, or whose corpus, queries or qrels were replaced after loading: what
    it holds, :meth:`Dataset.current_identity`, so that compare and check tell two such datasets apart),
    ``parsed_with`` (the library versions that parsed a corpus mapped from the corpus cache,
    :attr:`Corpus.parsed_with`: an earlier pyarrow's for a file it parsed; absent for a corpus parsed in RAM
    and not cached), and the numbers of documents and queries."""
    parsed_with = getattr(dataset.corpus, "parsed_with", None)
    content = dataset.current_identity()  # (a dataset built in Python, or changed since it was loaded: what it holds)
    content = content if content != dataset.identity() else dict(sorted(dataset.content.items()))
    return {"name": dataset.name, "split": dataset.split, "files": dataset.files,
            **({"content": content} if content else {}),
            **({"parsed_with": dict(sorted(parsed_with.items()))} if parsed_with else {}),
            "n_docs": len(dataset.corpus), "n_queries": len(dataset.queries)}


def search_run(retriever, dataset: Dataset, depth: int, ignore_identical_ids: bool,
               semantics: Semantics | str | None = None) -> Run:
    """Search to ``depth`` (one more when identical ids will be dropped, so depth hits remain).
    ``semantics``: the evaluator's (its order decides which documents the depth cut keeps, and the
    retriever is told it: ``Retriever.ranking_semantics``); None keeps the canonical float64 order."""
    if semantics is not None:
        retriever.ranking_semantics = parse_semantics(semantics)
    searched = retriever.search(dataset.queries, _search_k(depth, ignore_identical_ids))
    return _finish(checked_run(searched, dataset.queries, retriever, dataset.corpus), depth, ignore_identical_ids,
                   semantics)


def _search_k(depth: int, ignore_identical_ids: bool) -> int:
    """(Within int64, as ranks and counts are: a depth of 2^63 - 1 is searched as deep as it is.)"""
    return min(depth + 1, 2**63 - 1) if ignore_identical_ids else depth


def _finish(run: Run, depth: int, ignore_identical_ids: bool, semantics: Semantics | str | None = None) -> Run:
    if ignore_identical_ids:
        run = run.without_identical_ids()
    return top_depth(run, depth, semantics)


def _corpus_vocabulary(run: Run, corpus: Corpus | None) -> bool:
    """Whether the run's vocabulary is ``corpus``'s own ids (its ``id_column`` or ``id_array``, as a
    retriever over the corpus builds its runs): its codes are then distinct corpus ids."""
    return corpus is not None and any(run.vocab_source is corpus.__dict__.get(name)
                                      for name in ("id_column", "id_array"))


def _corpus_lookups(run: Run, corpus: Corpus) -> bool:
    """Whether ``run``, over ``corpus``'s vocabulary (:func:`_corpus_vocabulary`), finds and orders its
    ids as the corpus does: it gives no lookup of its own (``vocab_index``, ``vocab_sorted``,
    ``vocab_rank`` and the code at each rank) or gives the corpus's own (``id_index``; ``id_rank`` and
    ``id_order``, the same arrays or equal ones). A retriever's ``run_from_topk(..., corpus.id_array,
    id_rank=ranks)`` with ranks that are not the ids' (``np.argsort(ids)``, ``np.arange(n)``: a
    corpus taken as sorted) broke ties, and found judged ids, in that wrong order."""
    index = run._vocab_index
    if run.vocab_sorted or (index is not None and index is not corpus.__dict__.get("id_index")):
        return False
    view = run._rank_view
    claims = [(run.vocab_rank, "id_rank")]
    if view is not None and view[0] is run.vocab_source:
        claims.append((view[2], "id_order"))
    # (the built-in retrievers pass the corpus's own arrays: a BM25 cache hit hands the corpus its cached ones)
    return all(array is None or array is corpus.__dict__.get(name) or np.array_equal(array, getattr(corpus, name))
               for array, name in claims)


def _used_codes(run: Run) -> np.ndarray:
    """The distinct codes of the run's entries, ascending (a mask over the vocabulary: 1M entries in
    milliseconds, where ``np.unique``'s hash took ~0.65 s)."""
    mask = np.zeros(run.n_vocab, dtype=bool)
    mask[run.doc_codes] = True
    return np.flatnonzero(mask)


def _entry_query(run: Run, entry: int) -> str:
    return str(run.query_ids[int(np.searchsorted(run.offsets, entry, side="right")) - 1])


def _misordered(run: Run, used: np.ndarray, ids: list[str]) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """Two of the documents ``used`` (distinct codes; ``ids``: their str ids) that the string order the
    run claims for its ids (``vocab_sorted``: code order; ``vocab_rank``), by which ties between equal
    scores are broken (``Run._string_ranks``), puts otherwise than their strings: ((id, code), (id,
    code)) in the claimed order, ranks r1 <= r2 where not id1 < id2; None when the run claims no order
    or orders them as their strings. (A lookup of an id can find it at its code through a dict, as
    :meth:`Run.codes_of` does for a small vocabulary, while the claimed order is wrong.)"""
    ranks = run._string_ranks(used)
    if ranks is None or len(used) < 2:
        return None
    by_rank = np.argsort(ranks, kind="stable")
    ordered = object_array(ids)[by_rank]
    bad = np.flatnonzero((np.diff(ranks[by_rank]) <= 0) | ~(ordered[:-1] < ordered[1:]).astype(bool))
    if not bad.size:
        return None
    i = int(bad[0])
    return (str(ordered[i]), int(used[by_rank[i]])), (str(ordered[i + 1]), int(used[by_rank[i + 1]]))


def checked_run(run, queries: Queries, retriever, corpus: Corpus | None = None) -> Run:
    """What ``retriever.search(queries, k)`` returned, refused (a HarnessError naming the retriever, the
    query and the id) unless the evaluator can score it as the retriever meant it: a :class:`Run` (not
    a dict or an array: ``Run.from_dict`` or ``retrievers.topk.run_from_topk`` build one) of only the
    queries asked for, whose document ids are str, each found by the evaluator at its own code
    (:meth:`Run.codes_of`) and listed at most once per query, in the string order its ``vocab_sorted`` or
    ``vocab_rank`` claims (:func:`_misordered`: ties are broken in it), and no score NaN. (An int id never
    equals a judged id: every metric 0; an id at two codes, or one a wrong ``vocab_index`` places
    elsewhere, is not seen where it is ranked; a repeat takes two ranks, which trec_eval refuses.)
    Documents the corpus lacks are kept (see :func:`foreign_documents_warning`)."""
    who = f"retriever {getattr(retriever, 'name', type(retriever).__name__)!r}"
    if not isinstance(run, Run):
        raise HarnessError(f"{who}: search() returned {type(run).__name__}, not a harness.run.Run "
                           "(build it with Run.from_dict or retrievers.topk.run_from_topk)")
    asked = set(queries.ids)
    extra = next((q for q in run.query_ids.tolist() if q not in asked), None)
    if extra is not None:
        raise HarnessError(f"{who}: search() returned query {extra!r}, which it was not asked for")
    if len(run.doc_codes) and not (_corpus_vocabulary(run, corpus) and _corpus_lookups(run, corpus)):
        used = _used_codes(run)
        ids = run.doc_vocab[used].tolist()
        strings = all(map(isinstance, ids, repeat(str)))
        # where the evaluator looks each id up (Run.codes_of): its own code, or the entries are not that id to it
        wrong = np.flatnonzero(run.codes_of(ids) != used) if strings else None
        if not strings or wrong.size:
            at = next(i for i, d in enumerate(ids) if not isinstance(d, str)) if not strings else int(wrong[0])
            query = _entry_query(run, int(np.flatnonzero(run.doc_codes == used[at])[0]))
            why = (f"is {type(ids[at]).__name__}, not str" if not strings else
                   f"is code {used[at]} of the run's doc_vocab, where the evaluator looks it up at code "
                   f"{run.codes_of([ids[at]])[0]} (an id given two codes, or a vocab_index, vocab_sorted or "
                   "vocab_rank that does not match doc_vocab)")
            raise HarnessError(f"{who}: search() returned document {ids[at]!r} for query {query!r}: its id {why}")
        misordered = _misordered(run, used, ids)
        if misordered is not None:
            (first, code), (second, _) = misordered
            query = _entry_query(run, int(np.flatnonzero(run.doc_codes == code)[0]))
            raise HarnessError(f"{who}: search() returned documents {first!r} and {second!r} (query {query!r}) in a "
                               f"run whose vocab_sorted or vocab_rank puts {first!r} before {second!r}, where string "
                               "order does not: ties between equal scores would be broken in that wrong order")
    repeated = run.repeated_entry()
    if repeated is not None:
        raise HarnessError(f"{who}: search() returned document {repeated[1]!r} twice for query {repeated[0]!r} "
                           "(a document has one rank per query)")
    nan = np.flatnonzero(np.isnan(run.scores))
    if nan.size:
        raise HarnessError(f"{who}: search() returned a NaN score for query {_entry_query(run, nan[0])!r}, "
                           f"document {str(run.doc_vocab[run.doc_codes[nan[0]]])!r} (a NaN score has no rank)")
    return run


def absent_documents(run: Run, corpus: Corpus) -> np.ndarray:
    """The codes (ascending) of the documents ``run`` retrieves that ``corpus`` lacks: its used ids
    looked up in an Arrow hash set of the corpus's id column (typed as the column: no copy of the
    corpus's ids, no dict of them); none at once for a run over the corpus's own ids. The ids must
    be str (:func:`checked_run`)."""
    if _corpus_vocabulary(run, corpus) or not len(run.doc_codes):
        return np.zeros(0, dtype=np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    used = _used_codes(run)
    column = corpus.id_column.array
    found = pc.is_in(pa.array(run.doc_vocab[used].tolist(), column.type), value_set=column)
    return used[~found.to_numpy(zero_copy_only=False)]


def foreign_documents_warning(run: Run, corpus: Corpus, retriever_name: str) -> str | None:
    """The warning for documents of ``run`` that ``corpus`` lacks (kept, as a run file's are by
    ``harness evaluate``: retrieved and never relevant), naming the first; None when there are none."""
    absent = absent_documents(run, corpus)
    if not len(absent):
        return None
    entry = int(np.flatnonzero(run.doc_codes == absent[0])[0])
    return (f"{len(absent):,} document id(s) returned by {retriever_name!r} are not in the corpus (first: "
            f"{str(run.doc_vocab[absent[0]])!r} for query {_entry_query(run, entry)!r}); they count as "
            "retrieved and not relevant")


@dataclass
class TimedSearch:
    run: Run
    latency_ms: dict[str, float]  # query id -> ms
    basis: str  # efficiency.PER_REQUEST or efficiency.PER_BATCH_SHARE
    batch_size: int | None = None
    warning: str | None = None  # why the retriever's own latencies were not used
    failed: int = 0  # "per request": searched queries whose request failed (no latency; stats()["failed_queries"])


def timed_search(retriever, queries: Queries, k: int, finish=None, corpus: Corpus | None = None) -> TimedSearch:
    """Search ``queries`` and time each query; each batch's run is checked (:func:`checked_run`;
    ``corpus``: the one indexed) and ``finish(run)`` (untimed), when given, is applied to it before
    they are joined (a per-query step such as :func:`_finish`: the joined run is then copied once,
    at its final size).

    A retriever that times its own requests (``measures_latency``; its ``stats()`` holds
    ``query_latency_ms``) searches all queries in one call and its latencies are kept ("per
    request"; the queries its ``stats()["failed_queries"]`` lists have none, and are counted in
    ``failed``); any other searches batches of its ``search_batch_size`` queries (all in one call
    when None; larger batches when that would take more than ``MAX_TIMED_CALLS`` calls), each batch
    timed, and each query is given its batch's time divided by the batch's size ("per batch share").
    """
    finish = finish or (lambda run: run)
    if getattr(retriever, "measures_latency", False):
        started = time.perf_counter()
        run = retriever.search(queries, k)
        elapsed = time.perf_counter() - started
        run = finish(checked_run(run, queries, retriever, corpus))
        stats = getattr(retriever, "stats", None)
        stats = stats() if callable(stats) else {}
        own = stats.get("query_latency_ms") if isinstance(stats, dict) else None  # (a plugin's stats() may be no dict)
        failed = efficiency.failed_requests(stats.get("failed_queries") if isinstance(stats, dict) else None,
                                            queries.ids)
        measured, why = efficiency.measured_latencies(own, queries.ids, failed)
        if measured is not None:
            return TimedSearch(run, measured, efficiency.PER_REQUEST, failed=len(failed))
        return TimedSearch(run, efficiency.batch_shares([(queries.ids, elapsed)]), efficiency.PER_BATCH_SHARE,
                           len(queries), warning=why)
    batch_size = getattr(retriever, "search_batch_size", SEARCH_BATCH) or len(queries)
    batch_size = max(1, batch_size, -(-len(queries) // MAX_TIMED_CALLS))
    parts, batches = [], []
    for start in range(0, len(queries), batch_size):
        batch = Queries(queries.ids[start:start + batch_size], queries.texts[start:start + batch_size])
        started = time.perf_counter()
        part = retriever.search(batch, k)
        batches.append((batch.ids, time.perf_counter() - started))
        parts.append(finish(checked_run(part, batch, retriever, corpus)))
    return TimedSearch(concat_runs(parts), efficiency.batch_shares(batches), efficiency.PER_BATCH_SHARE, batch_size)


def check_run_file_ids(dataset: Dataset) -> None:
    """Fail before indexing when the run file of a result folder would be refused: the dataset's name
    (written in metrics.json and run.trec's header) must be UTF-8 text; every document id of
    the corpus and every query id is checked with the TREC writer's own rule
    (:func:`harness.formats.trec.check_writable_ids`: empty, ASCII whitespace, NUL; ``#`` leading a
    query id) and its message (ValueError, one line from the CLI). Vectorized over the corpus's Arrow
    ``_id`` column (1M ids: milliseconds), so a bad id costs seconds, not the whole index and search."""
    from harness.columns import is_utf8_text
    from harness.datasets.jsonl import object_line
    from harness.errors import InputError
    from harness.formats.trec import check_writable_ids, unwritable_ids, unwritable_message

    if not is_utf8_text(dataset.name):  # (a folder name holding bytes that are not UTF-8, surrogate-escaped)
        raise HarnessError(f"the dataset's name {dataset.name!r} is not UTF-8 text (its folder name holds bytes "
                           "that are not): metrics.json and run.trec could not hold it; rename the folder")
    bad = unwritable_ids(dataset.corpus.id_column)
    if len(bad):  # where it is: the corpus file's line (found again, only now), else the document's number
        position = int(bad[0])
        message = unwritable_message(dataset.corpus.ids[position], "document id")
        source = dataset.corpus.source
        line = object_line(source, position) if source is not None else None
        if line is not None:
            raise InputError(f"{message}: run.trec could not hold it", source, line)
        raise ValueError(f"{message}: document {position + 1:,} of {dataset.name}'s corpus, which run.trec could "
                         "not hold")
    check_writable_ids(dataset.queries.ids, "query id", first_column=True)


def check_cutoffs_and_depth(k_values, depth, evaluator: Evaluator | None = None) -> list:
    """``k_values`` as a list, after a ValueError naming the value unless every cutoff is an integer >= 1
    and ``depth`` is None or an integer in [1, 2^63 - 1] (numpy's integers too): what :func:`run_experiment`
    and :func:`harness.pipeline.run_pipeline` check before anything is indexed or searched. With ``evaluator``,
    each cutoff must also be one it computes a metric at: metrics.json records ``k_values`` as the cutoffs of its
    metrics (tables, reports and a recompute's ``harness evaluate --k`` read them), and ``run_experiment(...,
    Evaluator(k_values=[10]), [5, 100])`` recorded 5 and 100 beside metrics computed at 10 only."""
    k_values = list(k_values)
    if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in k_values):
        raise ValueError(f"k values must be integers >= 1, got {k_values}")
    if depth is not None:  # (0 was taken as None, the default depth; 2.5 failed in numpy after the index)
        count("depth", depth, ", or None for the deepest cutoff")  # (the check of a search's k, a rerank's depth)
    if evaluator is not None:
        computed = {getattr(metric, "k", None) for metric in evaluator.metrics}
        missing = [int(k) for k in k_values if k not in computed]
        if missing:
            at = sorted(k for k in computed if k is not None)
            raise ValueError(f"k values {[int(k) for k in k_values]}: the evaluator computes no metric at "
                             f"{', '.join(map(str, missing))} (its cutoffs: {', '.join(map(str, at)) or 'none'}); "
                             f"give it the same cutoffs, Evaluator(k_values={[int(k) for k in k_values]}), and a "
                             f"search depth as depth=")
    return k_values


def run_experiment(
    dataset: Dataset,
    retriever: Retriever,
    evaluator: Evaluator,
    k_values: list[int],
    depth: int | None = None,
    output_dir: str | Path | None = None,
) -> Experiment:
    """Index, search, evaluate and report ``dataset``; ``timings.load_s`` is the time
    :func:`~harness.datasets.load_dataset` took to load it (``dataset.load_s``). With ``output_dir``
    (a result folder with ``run.trec``), ids the run file could not hold fail first
    (:func:`check_run_file_ids`), and so does a retriever name its tag column could not hold.
    ``k_values`` (recorded in metrics.json) and ``depth`` (None: :func:`default_depth`) are checked
    first, as the evaluator checks its own: a ValueError naming the value."""
    k_values = check_cutoffs_and_depth(k_values, depth, evaluator)
    if output_dir is not None:
        check_run_file_ids(dataset)
        from harness.formats.trec import check_writable_ids

        if not isinstance(retriever.name, str):
            raise HarnessError(f"the retriever's name is {retriever.name!r}, not a str (run.trec's tag column)")
        check_writable_ids([retriever.name], "run tag")  # run.trec's tag column: refused now, not after the search
        from harness.reports.replacing import warn_if_replacing

        warn_if_replacing(Path(output_dir), {"name": retriever.name, "params": retriever.params()}, dataset.split)

    evaluator.refuse_no_relevant(dataset.qrels)  # (before the index and the search, not after)
    timer = Timer({"load_s": dataset.load_s})
    depth = int(depth) if depth is not None else default_depth(k_values, evaluator.metrics)
    retriever.ranking_semantics = evaluator.semantics  # a run-file cuts its ranking in the evaluator's order
    with timer("index_s"), progress.task(f"indexing {len(dataset.corpus):,} documents ({retriever.name})"):
        retriever.index(dataset.corpus)
    with timer("search_s"), progress.task(f"searching {len(dataset.queries):,} queries ({retriever.name})"):
        searched = timed_search(retriever, dataset.queries, _search_k(depth, evaluator.ignore_identical_ids),
                                finish=lambda part: _finish(part, depth, evaluator.ignore_identical_ids,
                                                            evaluator.semantics), corpus=dataset.corpus)
        run = searched.run
    with timer("evaluate_s"), progress.task("evaluating"):
        result = evaluator.evaluate(run, dataset.qrels)
    stats = getattr(retriever, "stats", None)
    stats = plain_json(stats()) if callable(stats) else None  # (a plugin's: may hold NaN, numpy values)
    stats_warning = None
    if not isinstance(stats, (dict, type(None))):  # (metrics.json's retriever_stats is an object, or none)
        stats_warning = (f"retriever {retriever.name!r}: stats() returned {type(stats).__name__}, not a dict: "
                         "not recorded")
        stats = None
    # (a plugin's params() too: a numpy scalar, a Path or a set failed json.dumps after the whole search,
    # once the earlier result's metrics.json was removed; a NaN was written as NaN, which is no JSON)
    params = plain_json(retriever.params())
    document = MetricsDocument.build(
        result, dataset=dataset_info(dataset), retriever={"name": retriever.name, "params": params},
        k_values=k_values, depth=depth, timings=timer.seconds, retriever_stats=stats,
        warnings=[*dataset.warnings, *filter(None, [depth_warning(depth, k_values, evaluator.metrics),
                                                     searched.warning, stats_warning,
                                                     reused_versions_warning(stats, "retriever_stats"),
                                                     foreign_documents_warning(run, dataset.corpus, retriever.name)])]
        or None)
    from harness.plugin_code import recorded_versions

    # a plugin's release, and its package's code digest
    document.versions = {**document.versions, **recorded_versions([type(retriever)])}
    document.efficiency = efficiency.efficiency_block(
        timer.seconds, len(dataset.queries), searched.latency_ms, searched.basis, searched.batch_size,
        index_bytes=(stats or {}).get("index_bytes"), failed=searched.failed)
    document.query_latency_ms = efficiency.query_latency_block(searched.latency_ms)
    folder = None
    if output_dir is not None:
        folder = write_result_folder(Path(output_dir), document, dataset.queries.as_dict(), run, tag=retriever.name)
    return Experiment(dataset, run, result, document, folder)
