"""A sentence-transformers ``SparseEncoder`` (SPLADE and kin) loaded lazily from a model folder
(:class:`retrievers.dense.model.ModelHandle`: a local path or a hub name, identified by the sha256
of its files), its outputs as :class:`retrievers.sparse.cache.SparseRows`."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from harness.errors import HarnessError
from retrievers.dense.model import ModelHandle, _json_or_none, resolve_device
from retrievers.sparse.cache import SparseRows


def rows_of(tensor, n_rows: int) -> SparseRows:
    """A (n_rows, dim) torch sparse COO tensor (or dense tensor or array) -> rows (term ids ascending, zeros
    dropped); a ValueError naming the shape when it is not (n_rows, dim)."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        tensor = np.asarray(tensor)
    shape = tuple(tensor.shape)
    if len(shape) != 2 or shape[0] != n_rows:
        raise ValueError(f"expected {n_rows} rows of term weights, got an array of shape {shape}")
    if isinstance(tensor, torch.Tensor) and tensor.is_sparse:
        tensor = tensor.coalesce()
        index, values = tensor.indices().cpu().numpy(), tensor.values().detach().cpu().float().numpy()
        row, col = index[0].astype(np.int64), index[1].astype(np.int64)
    else:
        dense = tensor.detach().cpu().float().numpy() if isinstance(tensor, torch.Tensor) else tensor
        flat = dense.reshape(-1)
        entries = np.flatnonzero(flat)  # row-major: rows ascending, terms ascending in each (np.nonzero of the
        row, col = np.divmod(entries, shape[1])  # 2-D array, which makes two index arrays, is ~15x as slow)
        values = flat[entries]
    keep = values != 0
    row, col, values = row[keep], col[keep], values[keep]
    order = np.lexsort((col, row))
    return SparseRows(np.bincount(row, minlength=n_rows).astype(np.int64), col[order].astype(np.int32),
                      values[order].astype(np.float32))


def check_sparse_encoder(model, handle: ModelHandle) -> None:
    """A HarnessError when sentence-transformers built ``model`` with a layer that is not in the folder.

    ``SparseEncoder(folder)`` takes any model: a saved SparseEncoder is loaded as saved, a masked-LM
    checkpoint (``architectures`` ``...ForMaskedLM``) becomes SPLADE (its MLM head and max pooling), but
    anything else (a sentence-transformers bi-encoder, a plain ``BertModel``, a cross-encoder) gets a
    ``SparseAutoEncoder`` (CSR) appended with random weights (a log line at most: "Converting
    SentenceTransformer model ... to SparseEncoder"): every term weight, and the run's metrics, would be
    noise (or, for a small hidden size, a torch traceback "selected index k out of range")."""
    st_config = _json_or_none(handle.folder / "config_sentence_transformers.json")
    saved = (handle.folder / "modules.json").is_file() and isinstance(st_config, dict) and \
        st_config.get("model_type") == "SparseEncoder"
    if not saved and any(type(module).__name__ == "SparseAutoEncoder" for module in model):
        raise HarnessError(f"model {handle.name!r} is not a sparse encoder (a saved SparseEncoder or a masked-LM "
                           "checkpoint for SPLADE): sentence-transformers would add a SparseAutoEncoder of random "
                           "weights to it")


class SparseModel:
    """Encode documents and queries to term weights; ``max_active_dims`` keeps each text's largest."""

    def __init__(self, handle: ModelHandle, batch_size: int, max_active_dims: int | None):
        self.handle, self.batch_size, self.max_active_dims = handle, batch_size, max_active_dims
        self._model = None

    def load(self):
        if self._model is None:
            started = time.perf_counter()
            self.handle.device = resolve_device(self.handle.requested_device)
            from sentence_transformers import SparseEncoder

            model = self.handle.files.loaded(lambda: SparseEncoder(str(self.handle.folder), device=self.handle.device))
            check_sparse_encoder(model, self.handle)
            self._model = model
            self.handle.load_seconds = time.perf_counter() - started
        return self._model

    def encode(self, texts: Sequence[str], role: str) -> SparseRows:
        model = self.load()
        method = model.encode_document if role == "document" else model.encode_query
        if not len(texts):
            return SparseRows.concat([])
        out = method(list(texts), batch_size=self.batch_size, convert_to_sparse_tensor=True,
                     max_active_dims=self.max_active_dims, show_progress_bar=False)
        return rows_of(out, len(texts))
