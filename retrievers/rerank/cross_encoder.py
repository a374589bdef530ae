"""``cross-encoder``: score (query, document) pairs with a sentence-transformers ``CrossEncoder``.

Each query's candidates are scored in their own ``predict`` call (batches of ``batch_size``
pairs, never mixed with another query's), so a query's scores do not depend on which other
queries the run holds. The document text is the dense retriever's
(:func:`retrievers.dense.texts.document_texts`: title, a space, text, stripped); the query text is
the dataset's. Pairs longer than ``max_length`` tokens are truncated by the model's tokenizer.

Scores are the model's output for the one label after its activation (``activation="model"``:
what ``CrossEncoder.predict`` returns, e.g. a sigmoid for a one-label model without a configured
activation; ``identity``: raw logits, which separate near-certain documents that a sigmoid rounds to
the same float32; ``sigmoid``). Batching changes the scores only in the last float32 bits: torch
kernels round differently for different batch shapes (CrossEncoder.predict behaves the same).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from harness import progress
from harness.datasets.corpus import Corpus, Queries
from harness.versions import ENCODER_LIBRARIES, computed_with
from retrievers.dense.model import gpu_request, hub_error, position_limit
from retrievers.dense.texts import document_texts
from retrievers.rerank.base import Candidates, Reranker

ACTIVATIONS = ("model", "identity", "sigmoid")


def untrained_head(transformers_model) -> str | None:
    """The architectures the checkpoint was saved as (``config.json``'s ``architectures``) when the class
    that loaded it is not among them, else None (also when the config names none: nothing to compare).

    ``CrossEncoder`` loads any folder as ``AutoModelForSequenceClassification`` (a sentence-transformers
    bi-encoder or SPLADE folder is "converted", with only a log line): for a checkpoint saved as
    ``BertModel`` or ``BertForMaskedLM`` the classifier is not in the file and transformers initializes it
    at random, so every score, and the reranked run's metrics, are noise."""
    config = getattr(transformers_model, "config", None)
    saved = getattr(config, "architectures", None)
    if not saved or not isinstance(saved, (list, tuple)) or type(transformers_model).__name__ in saved:
        return None
    return ", ".join(map(str, saved))


class CrossEncoderReranker(Reranker):
    """Rescore candidates with a cross-encoder (hub name or local folder; one output label)."""

    name = "cross-encoder"

    def __init__(self, model: str | None = None, batch_size: int = 32, max_length: int | None = None,
                 device: str = "auto", activation: str = "model", revision: str | None = None):
        if not model or not isinstance(model, str):
            raise ValueError("the cross-encoder reranker needs model=NAME_OR_PATH (a hub name or a local folder)")
        for label, value in (("batch_size", batch_size), ("max_length", max_length)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
        self.model_name, self.revision, self.batch_size = model, revision, batch_size
        self.max_length, self.requested_device, self.activation = max_length, device, activation
        self._model = None
        self._folder: Path | None = None
        self._files = None  # (FolderFiles of the folder: its digest, and the model loaded from those files)
        self._stats: dict = {}

    def folder(self) -> Path:
        """The model's files: the local folder, or for a hub name the snapshot of ``revision`` (default the
        repo's main) in the Hugging Face cache, downloaded on first use as the dense retriever's
        :meth:`~retrievers.dense.model.ModelHandle.resolve` does (same files skipped: ONNX, TF, Flax...;
        ``HF_HUB_OFFLINE=1`` takes the cached snapshot). The model is loaded from, and its digest taken
        over, this one folder."""
        if self._folder is None:
            path = Path(os.path.expanduser(self.model_name))
            if path.is_dir():
                self._folder = path
            elif self.model_name.startswith(("/", ".", "~")):  # (a file: not "does not exist")
                raise ValueError(f"cross-encoder model folder {self.model_name!r} "
                                 f"{'is not a folder' if path.exists() else 'does not exist'}")
            else:
                from retrievers.dense.model import _HUB_IGNORE

                try:
                    from huggingface_hub import snapshot_download

                    self._folder = Path(snapshot_download(self.model_name, revision=self.revision,
                                                          ignore_patterns=_HUB_IGNORE))
                except Exception as exc:  # network, missing repo, offline without a cached copy
                    raise ValueError(f"cannot get cross-encoder {self.model_name!r} (not a folder; hub download "
                                     f"failed: {hub_error(exc)})") from None
        return self._folder

    def load(self):
        """The CrossEncoder (loaded on first use; torch is imported only then)."""
        if self._model is None:
            started = time.perf_counter()
            from sentence_transformers import CrossEncoder

            from retrievers.dense.model import resolve_device

            folder = self.folder()
            try:
                model = self.files().loaded(lambda: CrossEncoder(str(folder), max_length=self.max_length,
                                                                 device=resolve_device(self.requested_device)))
            except (OSError, ValueError) as exc:  # not a model folder / hub repo, or offline without a cached copy
                raise ValueError(f"cannot load cross-encoder {self.model_name!r}: {exc}") from None
            if model.num_labels != 1:
                raise ValueError(f"cross-encoder {self.model_name!r} has {model.num_labels} output labels; "
                                 "a reranker needs a model with one score per pair")
            untrained = untrained_head(model.model)
            if untrained:
                raise ValueError(f"{self.model_name!r} is not a cross-encoder: its weights were saved for "
                                 f"{untrained}, and sentence-transformers would score the pairs with a "
                                 f"{type(model.model).__name__} head of random weights")
            positions = position_limit(model.model.config)
            if self.max_length is not None and positions is not None and self.max_length > positions:
                raise ValueError(f"max_length {self.max_length} is more than cross-encoder {self.model_name!r} "
                                 f"has positions for ({positions}): give at most {positions}")
            self._model = model
            self._stats["model_load_seconds"] = round(time.perf_counter() - started, 3)
        return self._model

    def _activation_fn(self):
        if self.activation == "model":
            return None
        import torch

        return torch.nn.Identity() if self.activation == "identity" else torch.nn.Sigmoid()

    def params(self) -> dict:
        """The settings, with ``model_sha256``: the sha256 of a local model folder's files
        (:func:`retrievers.dense.model.folder_digest`, as the dense and sparse retrievers record theirs), so
        that a pipeline's rerank stage cache and a benchmark's cell, keyed by these params, are computed
        again when the model in the folder changes (a model retrained into the same folder was served the
        old model's reranked run). A hub name's digest is its snapshot's (:meth:`folder`): a repo whose main
        moved to new weights is a new digest, where it was None (and a cached stage served the old model's run).

        The digest is remembered in ``<cache>/embeddings/model-digests.json``, the dense retriever's memo
        (keyed by folder, each file's size, mtime, ctime and inode), so that a new process (a rerun whose
        rerank stage or bench cell is cached, a benchmark's next cell) does not read the whole model again."""
        return {"model": self.model_name, "revision": self.revision, "model_sha256": self.model_sha256,
                "max_length": self.max_length, "batch_size": self.batch_size, "activation": self.activation,
                "device": self.device_type}

    @property
    def device_type(self) -> str:
        """The kind of device the model runs on, ``cpu``, ``cuda`` or ``mps`` (``cuda:1`` -> ``cuda``; ``auto``
        resolved as :meth:`load` resolves it, importing torch only then), in :meth:`params`: a GPU's kernels
        round otherwise than the CPU's, so a cuda run's scores differ from a cpu run's in the last bits, and a
        stage or cell computed on one is not served to a run on the other. The GPU's index is left out (the
        same kind of device, the same kernels)."""
        if self._model is not None:
            return self._model.device.type
        if self.requested_device == "auto":
            from retrievers.dense.model import resolve_device

            return resolve_device("auto")
        return self.requested_device.split(":", 1)[0]

    def files(self):
        """The folder's :class:`~retrievers.dense.model.FolderFiles`: the model is loaded from the files hashed."""
        if self._files is None:
            from retrievers.dense.model import FolderFiles

            self._files = FolderFiles(self.folder())
        return self._files

    @property
    def model_sha256(self) -> str:
        """The folder's digest, taken once (a stage key's, then the result's: of the files the model was loaded
        from; a folder rewritten between the two is refused when the model loads)."""
        from harness.cache import cache_dir

        # (the memo's stamps of the files tell an unchanged folder; without it every instance hashed the folder
        # whole: 2.3 GB for bge-reranker-v2-m3)
        return self.files().digest(cache_dir("embeddings") / "model-digests.json")

    def stats(self) -> dict:
        return {"device": str(self._model.device) if self._model is not None else "not loaded", **self._stats}

    def resources(self, cluster: dict) -> dict:
        """What a benchmark cell with this reranker asks a Ray cluster for (as the dense retriever):
        one GPU when the model runs on one (``device='cuda'``, or ``auto`` on a cluster with GPUs)."""
        return gpu_request(self.requested_device, cluster)

    def score(self, candidates: Candidates, queries: Queries, corpus: Corpus) -> np.ndarray:
        model = self.load()
        subset, doc_of_entry = candidates.documents(corpus)
        texts = document_texts(subset)
        activation_fn = self._activation_fn()
        out = np.empty(len(candidates), dtype=np.float32)
        offsets = candidates.offsets.tolist()
        started = time.perf_counter()
        with progress.task("cross-encoding", total=len(candidates), unit="pairs") as bar:
            for i, q_row in enumerate(candidates.query_rows.tolist()):
                start, end = offsets[i], offsets[i + 1]
                if start == end:
                    continue
                query = queries.texts[q_row]
                pairs = [(query, texts[j]) for j in doc_of_entry[start:end].tolist()]
                out[start:end] = model.predict(pairs, batch_size=self.batch_size, activation_fn=activation_fn,
                                               show_progress_bar=False, convert_to_numpy=True)
                bar.advance(end - start)
        seconds = time.perf_counter() - started
        # (what computed the scores, which a pipeline stage caches: its record reports them on a hit)
        self._stats["scores_versions"] = computed_with(ENCODER_LIBRARIES)
        self._stats.update({"pairs": len(candidates), "score_seconds": round(seconds, 3),
                            "pairs_per_second": round(len(candidates) / seconds, 1) if seconds > 0 else None})
        return out
