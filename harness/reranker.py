"""The reranker interface: a run's top ``depth`` candidates per query in, a rescored run out.

It lives in the core because the core calls it (``harness rerank``, pipelines); the rerankers in
``retrievers/rerank/`` (and plugins) implement it.

A reranker scores each query only against that query's own candidates (never a pool of every
query's candidates, the mistake of BEIR issue #106). The output holds the reranked top ``depth``
of each query in canonical order (score descending, then document id descending, as the evaluator
and trec_eval rank); documents the first stage ranked below ``depth`` are dropped, as BEIR's
``Rerank`` keeps only the reranked top k, so no first-stage score is ever compared with a reranker
score.
"""

from __future__ import annotations

import functools
import types
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.datasets.corpus import Corpus, Queries
from harness.errors import InputError
from harness.evaluation.semantics import Semantics, parse_semantics
from harness.retriever import check_corpus, check_queries, count
from harness.run import Run


def _line_of(path: str | Path | None, column: int, value: str, data: bytes | None = None) -> int | None:
    """The first line of the run file ``path`` whose ``column`` is ``value`` (for error messages), read
    as the run was (:func:`harness.formats.trec.line_of`: a ``.gz`` run decompressed; ``data``, the bytes
    of standard input or a pipe, already read)."""
    if path is None:
        return None
    from harness.formats.trec import line_of

    return line_of(path, column, value, data)


@dataclass(frozen=True, eq=False)
class Candidates:
    """The pairs to score, grouped by query (CSR layout, like :class:`harness.run.Run`).

    ``query_rows[i]`` is the row of the run's i-th query in ``queries``; entries
    ``offsets[i]:offsets[i+1]`` are its candidates, ``doc_rows`` their rows in the corpus.
    """

    query_ids: list[str]
    query_rows: np.ndarray
    offsets: np.ndarray
    doc_rows: np.ndarray
    # (corpus ids, their string ranks, the row at each rank) when the run came from a retriever over
    # this corpus (its vocabulary is the corpus's id_column or id_array): the reranked run's id lookups use them
    id_order: tuple | None = None

    @classmethod
    def of(cls, run: Run, queries: Queries, corpus: Corpus, depth: int, source: str | Path | None = None,
           semantics: Semantics | str | None = None, source_data: bytes | None = None) -> "Candidates":
        """The top ``depth`` documents of each query of ``run`` in the evaluator's order under
        ``semantics`` (default trec_eval-9: score descending compared as float32, then document id
        descending; trec_eval-10: as doubles).

        Every query id of the run must be one of ``queries`` and every document id one of ``corpus``
        (the whole run is checked, not only the top ``depth``); otherwise an :class:`InputError`
        names the id (and ``source``, the run's file, with the line when it can be found; ``source_data``:
        its bytes as stored, when it was standard input or a pipe, read once).
        """
        depth = count("depth", depth)
        query_row = {qid: i for i, qid in enumerate(queries.ids)}
        qids = run.query_ids.tolist()
        for qid in qids:
            if qid not in query_row:
                raise InputError("query is not among the split's queries (those its qrels judge)", source,
                                 _line_of(source, 0, qid, source_data), qid)
        # the top depth of the evaluator's ranking (trec_eval 9, the default: scores compared as
        # float32, ties by id descending), not of the run's float64 order: a file's double scores that
        # tie in float32 would otherwise cut a different document at the depth than the evaluator ranks
        order = parse_semantics(semantics)
        top = run.with_scores(order.ranking_scores(run.scores)).truncated(depth)
        query_rows = np.array([query_row[q] for q in qids], dtype=np.int64)
        if _corpus_ids(run.vocab_source, corpus):  # a retriever's run over this corpus: codes are rows
            view = run._rank_view
            id_order = view if view is not None and view[0] is run.vocab_source else None
            return cls(qids, query_rows, top.offsets, top.doc_codes, id_order)
        index = corpus.id_index
        vocab_rows = np.fromiter((index.get(d, -1) for d in run.doc_vocab.tolist()), dtype=np.int64,
                                 count=run.n_vocab)
        used = np.zeros(len(vocab_rows), dtype=bool)
        used[run.doc_codes] = True
        missing = np.flatnonzero(used & (vocab_rows < 0))
        if missing.size:
            doc_id = run.doc_vocab[missing[0]]
            raise InputError("document is not in the dataset's corpus", source,
                             _line_of(source, 2, doc_id, source_data), doc_id)
        return cls(qids, query_rows, top.offsets, vocab_rows[top.doc_codes])

    def __len__(self) -> int:
        return len(self.doc_rows)

    @property
    def entry_query_rows(self) -> np.ndarray:
        """The row in ``queries`` of every entry's query."""
        return np.repeat(self.query_rows, np.diff(self.offsets))

    def documents(self, corpus: Corpus) -> tuple[Corpus, np.ndarray]:
        """(the distinct candidate documents as a small corpus, each entry's row in it)."""
        needed, inverse = np.unique(self.doc_rows, return_inverse=True)
        rows = needed.tolist()
        subset = Corpus([corpus.ids[i] for i in rows], [corpus.titles[i] for i in rows],
                        [corpus.texts[i] for i in rows])
        return subset, inverse

    def to_run(self, scores: np.ndarray, corpus: Corpus) -> Run:
        """A run of these candidates with new ``scores`` (one per entry), in canonical order."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != self.doc_rows.shape:
            raise ValueError(f"need one score per candidate ({len(self)}), got shape {scores.shape}")
        if self.id_order is not None and _corpus_ids(self.id_order[0], corpus):
            ids, rank, order = self.id_order
            return Run.from_arrays(self.query_ids, self.offsets, self.doc_rows, scores, ids,
                                   vocab_rank=rank, vocab_order=order).canonical()
        return Run.from_arrays(self.query_ids, self.offsets, self.doc_rows, scores, corpus.id_array,
                               corpus.id_index).canonical()


def _corpus_ids(vocabulary, corpus: Corpus) -> bool:
    """Whether a run's vocabulary (``Run.vocab_source``) is ``corpus``'s own ids (its ``id_column``
    or ``id_array``), so that the run's codes are the corpus's rows."""
    return any(vocabulary is corpus.__dict__.get(name) for name in ("id_column", "id_array"))


def check_rerank(run, queries, corpus, depth) -> int:
    """Refuse a rerank no reranker can answer as asked: ``run`` not a :class:`Run`, ``queries`` not a
    :class:`Queries` or ``corpus`` not a :class:`Corpus` (a TypeError naming the argument), ``depth`` not an
    integer in [1, 2^63 - 1] (a ValueError naming it: :func:`harness.retriever.count`, the check of a search's
    ``k``). Returns ``depth`` as an int. Run before :meth:`Reranker.rerank`, a plugin's override of it too."""
    if not isinstance(run, Run):
        raise TypeError(f"run must be a harness Run (Run.from_dict({{query id: {{doc id: score}}}}) makes one), "
                        f"got {type(run).__name__}")
    check_queries(queries)
    check_corpus(corpus)
    return count("depth", depth)


def _checked_rerank(rerank):
    """A subclass's own ``rerank`` with its arguments checked first (:func:`check_rerank`), ``depth`` an int."""
    @functools.wraps(rerank)  # (inspect.signature still reads the override's own: harness rerank asks it)
    def checked(self, run, queries, corpus, depth, *args, **kwargs):
        return rerank(self, run, queries, corpus, check_rerank(run, queries, corpus, depth), *args, **kwargs)

    checked.__harness_checked__ = True
    return checked


class Reranker(ABC):
    """A second stage: rescore the top ``depth`` candidates of each query of a run.

    Subclasses set ``name`` and implement :meth:`score`; :meth:`params` identifies the settings.
    :meth:`rerank` checks its arguments first (:func:`check_rerank`), a subclass's override of it too
    (wrapped by ``__init_subclass__``): ``run`` a :class:`Run`, ``queries`` a :class:`Queries`, ``corpus`` a
    :class:`Corpus`, ``depth`` an integer in [1, 2^63 - 1] (numpy's too; a bool, a float, a str or None
    refused), as a retriever's ``search`` checks its ``k``.
    """

    name: str = "reranker"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        method = cls.__dict__.get("rerank")
        if isinstance(method, types.FunctionType) and not getattr(method, "__harness_checked__", False):
            cls.rerank = _checked_rerank(method)

    def rerank(self, run: Run, queries: Queries, corpus: Corpus, depth: int,
               source: str | Path | None = None, ignore_identical_ids: bool = True,
               semantics: Semantics | str | None = None, source_data: bytes | None = None) -> Run:
        """The reranked top ``depth`` of each query of ``run`` in canonical order (see module docstring).

        ``queries`` and ``corpus`` are the dataset's; ``source`` names the run's file in errors (with the
        line: ``source_data``, the bytes of a run read from standard input or a pipe).
        ``ignore_identical_ids`` (the evaluator's rule, on by default): a document whose id is its
        query's id is dropped before the cut, so it takes none of the ``depth`` places the evaluator
        would rank other documents in. ``semantics``: the evaluator's, whose order the cut follows
        (default trec_eval-9).
        """
        depth = check_rerank(run, queries, corpus, depth)
        if ignore_identical_ids:
            run = run.without_identical_ids()
        candidates = Candidates.of(run, queries, corpus, depth, source, semantics, source_data)
        return candidates.to_run(self.score(candidates, queries, corpus), corpus)

    @abstractmethod
    def score(self, candidates: Candidates, queries: Queries, corpus: Corpus) -> np.ndarray:
        """One score per candidate entry (aligned with ``candidates.doc_rows``); higher is better."""

    def params(self) -> dict:
        return {}

    def close(self) -> None:
        """Release what this reranker holds (a model on a device, a client): called once when the harness is done
        with it (``harness rerank``, a pipeline after its last stage), as :meth:`Retriever.close
        <harness.retriever.Retriever.close>`. Default: nothing."""

    def stats(self) -> dict:
        return {}
