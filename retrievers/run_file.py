"""The ``run-file`` retriever: replay a TREC run produced by another search stack.

    harness run --retriever run-file --param path=my_system.trec --dataset scifact

``index()`` does nothing (beyond noting the corpus, to count run documents it lacks); ``search()``
returns the run restricted to the requested queries, in the requested order, each cut to the top
``k`` of the evaluator's order (score descending, ties by document id descending; the scores
compared as the experiment's semantics compares them, ``ranking_semantics``: as float32 under
trec_eval-9, so 1.00000001 and 1.0 tie; as doubles under trec_eval-10 or outside an experiment).
Queries the run lacks come back empty and score 0. The file's sha256 is part of :meth:`params`, so
a benchmark notices when the file changes; it is the hash of the content that was read and scored
(a file rewritten between a benchmark's fingerprint and the search is hashed again when read, and
one rewritten while it is read is an error). ``path=-`` is standard input (``zcat run.gz | harness run -r
run-file -p path=- ...``), read once, whole, at the first :meth:`params` or :meth:`run`: recorded as
``<stdin>`` with the sha256 of the bytes read, and named ``<stdin>:LINE`` in errors. What was read is
shared by every ``path=-`` retriever this process makes (a bench's pipeline stage is made once to plan
its params and again for each dataset it runs on: each found standard input at its end, an empty run).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from harness.checksums import HashedFile
from harness.datasets.corpus import Corpus, Queries
from harness.run import Run
from harness.retriever import Retriever


_STDIN: dict = {}  # standard input as this process read it for path=-: stream, sha256, then raw bytes or the Run


def _stdin_replay() -> dict:
    """Standard input's bytes (``raw``, until parsed into ``run``) and their ``sha256``, read once per
    process (per ``sys.stdin``: a test or an embedding that replaces it is read anew)."""
    import sys

    if _STDIN.get("stream") is not sys.stdin:
        import hashlib

        from harness.formats.trec import read_once

        raw = read_once("-", "run")
        _STDIN.clear()
        _STDIN.update(stream=sys.stdin, raw=raw, sha256=hashlib.sha256(raw).hexdigest())
    return _STDIN


class RunFileRetriever(Retriever):
    """Serve results from a 6-column TREC run file (``qid Q0 docid rank score tag``)."""

    name = "run-file"
    search_batch_size = None  # one search() call: stats() describe it (a lookup has no latency to speak of)
    index_required = False  # the file is the index: index() only names the corpus for stats()

    def __init__(self, path: str):
        from harness.formats.trec import STDIN_NAME, is_stdin

        self._stdin = is_stdin(path)  # (read at the first params() or run(): after every option is checked)
        self.path = STDIN_NAME if self._stdin else Path(os.path.expanduser(str(path)))
        if not self._stdin and not self.path.is_file():
            raise ValueError(f"run file not found: {self.path}")
        self._sha256: str | None = None  # standard input's
        self._file = None if self._stdin else HashedFile(self.path, "the run file")
        self._run: Run | None = None
        self._corpus: Corpus | None = None
        self._stats: dict = {}

    def params(self) -> dict:
        """The file's path and sha256: of the content :meth:`run` read, once it has read it (a file
        rewritten after that keeps the hash of what was scored), else of the file as it is now; standard
        input's: of the bytes read (read now, once)."""
        if self._stdin:
            self._read_stdin()
            return {"path": str(self.path), "sha256": self._sha256}
        return {"path": str(self.path), "sha256": self._file.sha256()}

    def stats(self) -> dict:
        return dict(self._stats)

    def _read_stdin(self) -> None:
        """Standard input's sha256 (read once per process: :func:`_stdin_replay`)."""
        if self._sha256 is None:
            self._sha256 = _stdin_replay()["sha256"]

    def run(self) -> Run:
        """The whole run file, in canonical order (read once)."""
        if self._run is None and self._stdin:
            from harness.formats.trec import read_run

            self._read_stdin()
            shared = _stdin_replay()
            if "run" not in shared:  # (the bytes are dropped once parsed: one copy of the run in memory)
                shared["run"] = read_run("-", shared["raw"])
                del shared["raw"]
            self._run = shared["run"]
        if self._run is None:
            from harness.formats.trec import read_run

            self._run = self._file.read(read_run)
        return self._run

    def index(self, corpus: Corpus) -> None:
        self._corpus = corpus

    def search(self, queries: Queries, k: int) -> Run:
        run = self.run()  # (queries and k checked by Retriever: harness.retriever.check_search)
        position = {q: i for i, q in enumerate(run.query_ids.tolist())}
        rows = np.array([position.get(q, -1) for q in queries.ids], dtype=np.int64)
        found = rows >= 0  # (rows of absent queries index nothing: a run of no query has no offsets[:-1])
        starts, lengths = np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
        starts[found] = run.offsets[rows[found]]
        lengths[found] = run.offsets[rows[found] + 1] - starts[found]
        if self.ranking_semantics is None:  # canonical (float64) order: each query's first k entries
            lengths = np.minimum(lengths, k)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        # Gather each kept query's first `length` entries (the run is canonical): one index array.
        take = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        out = Run(np.asarray(list(queries.ids), dtype=object), offsets, run.doc_codes[take], run.scores[take],
                  run.doc_vocab, run._vocab_index)
        if self.ranking_semantics is not None:
            from harness.evaluation.semantics import top_depth

            out = top_depth(out, k, self.ranking_semantics)
        self._stats = {"run_queries": run.n_queries, "requested_queries": len(queries),
                       "requested_missing_from_run": int((rows < 0).sum())}
        if self._corpus is not None:
            from harness.experiment import absent_documents

            self._stats["returned_docs_not_in_corpus"] = len(absent_documents(out, self._corpus))
        return out
