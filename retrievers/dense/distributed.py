"""Dense encoding sharded over a Ray cluster, written straight into the embedding cache.

The missing chunks of an :class:`~retrievers.dense.cache.EmbeddingCache` entry (the shards) become
the rows of a Ray Dataset, one row per chunk holding the chunk's texts. ``map_batches`` hands them
to a pool of :class:`ChunkEncoder` actors (one model per actor: one actor per GPU, or N CPU
actors); each actor encodes a chunk and writes its ``part-<chunk size>-NNNNNN.npy`` itself,
atomically, into the entry's folder. That folder must therefore be on storage every node reads and
writes (``HARNESS_CACHE_DIR`` on a shared filesystem; see docs/ray.md). The driver then assembles
``embeddings.npy`` from the parts exactly as a local encode does, so a later local run finds a
complete entry (a cache hit), and an interrupted job resumes from the parts already written.

A worker that dies midway costs only the chunk it held: Ray Data restarts the actor and retries
the chunk (its actor pools default to ``max_restarts=-1``, ``max_task_retries=-1``); a part is
renamed into place only once whole, so nothing half-written is ever read.

Ray is optional (``pip install "retrieval-harness[ray]"``); nothing here imports it until
:func:`encode_missing` runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from harness import raycluster
from harness.atomic import write_json
from harness.errors import HarnessError
from harness.versions import ENCODER_LIBRARIES, computed_with
from retrievers.dense.cache import EmbeddingCache
from retrievers.dense.model import ModelHandle, wants_gpu

def require_ray():
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data: the actor pool)
    except ImportError:
        raise HarnessError('the Ray encoder needs Ray Data: pip install "retrieval-harness[ray]"') from None
    return ray


def connect(address: str | None = None):
    """The ``ray`` module, connected: to ``address`` (``auto``, ``ray://host:port``), else to
    ``$RAY_ADDRESS``, else a local Ray started here. An already initialized Ray is kept."""
    ray = require_ray()
    raycluster.init(ray, address)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the harness draws its own
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    return ray


@dataclass(frozen=True)
class EncodeJob:
    """What every actor needs: the model folder and settings, and the cache entry to write into."""

    model_name: str
    model_folder: str
    device: str
    prompt: str | None
    batch_size: int
    normalize: bool
    max_seq_length: int
    cache_folder: str
    n_rows: int
    chunk_size: int
    model_sha256: str = ""  # the driver's digest of the model folder (the cache entry's key): the actors' must match
    digest_memo: str | None = None  # the driver's model-digests.json (shared cache root: the digest not taken again)


def _error_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    return message if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {message}"


class ChunkEncoder:
    """A Ray Data actor: loads the model once, then encodes whole chunks and writes their parts.

    An exception (the model does not load, a chunk fails to encode) is returned as the chunk's
    ``error`` rather than raised: Ray would report it as its own many-line task error, without the
    reason on its first line; the driver raises it as one line naming the chunk."""

    def __init__(self, job: EncodeJob):
        self.job, self.error = job, None
        self.library = self.library_versions()  # recorded with each part written, and returned with it
        self.versions = json.dumps(self.library, sort_keys=True)
        # writing a part needs only the folder and each chunk's length, which the order does not change
        self.entry = EmbeddingCache(Path(job.cache_folder), job.n_rows, np.arange(job.n_rows), job.chunk_size, {})
        try:
            self.model = self.load_model(job)
            self.check_model(self.model, job)
        except Exception as exc:  # noqa: BLE001 - reported with each chunk handed to this actor
            self.model, self.error = None, f"loading model {job.model_name!r}: {_error_line(exc)}"

    @staticmethod
    def library_versions() -> dict[str, str]:
        """The versions of the encoding libraries in this actor's process: its node's environment, which the
        driver records for the parts the actor wrote (a cluster may run other versions than the driver)."""
        return computed_with(ENCODER_LIBRARIES)

    @staticmethod
    def load_model(job: EncodeJob) -> ModelHandle:
        model = ModelHandle(job.model_name, Path(job.model_folder), device=job.device)
        model.load()
        return model

    @staticmethod
    def check_model(model: ModelHandle, job: EncodeJob) -> None:
        """Refuse a model folder whose files on this actor's node are not those the driver hashed: the parts
        are cached under the driver's digest, and another node's copy of the folder (another checkpoint, one
        rewritten since) would have its embeddings served to every later run of the driver's model. The
        digest is of the files loaded (:class:`~retrievers.dense.model.FolderFiles`)."""
        if not job.model_sha256:
            return
        # (the driver's memo read, never written: another node's copy has its own inodes and times)
        found = model.digest(Path(job.digest_memo) if job.digest_memo else None, remember=False)
        if found != job.model_sha256:
            raise HarnessError(f"model folder {job.model_folder} on this node holds other files than the driver "
                               f"hashed (sha256 {found[:12]} here, {job.model_sha256[:12]} there); the "
                               "embeddings are cached under the driver's: give every node the same folder")

    def encode_chunk(self, chunk: int, texts: list[str]) -> np.ndarray:
        job = self.job
        return self.model.encode(texts, prompt=job.prompt, batch_size=job.batch_size, normalize=job.normalize,
                                 max_seq_length=job.max_seq_length)

    def __call__(self, batch: dict) -> dict:
        chunks, errors = [int(c) for c in batch["chunk"]], []
        for chunk, texts in zip(chunks, batch["texts"]):
            error = self.error
            if error is None:
                try:
                    self.entry.write_part(chunk, self.encode_chunk(chunk, [str(t) for t in texts]), self.library)
                except Exception as exc:  # noqa: BLE001 - reported by the driver, naming the chunk
                    error = _error_line(exc)
            errors.append(error or "")
        return {"chunk": np.asarray(chunks, dtype=np.int64), "error": np.asarray(errors, dtype=object),
                "versions": np.asarray([self.versions] * len(chunks), dtype=object)}


def _held_gpus(ray) -> float:
    """The GPUs the Ray task this runs in holds (a benchmark cell's: a pipeline whose reranker runs
    on a GPU); 0 outside a task (the driver)."""
    try:
        return float(ray.get_runtime_context().get_assigned_resources().get("GPU", 0))
    except Exception:  # noqa: BLE001 - the driver (Ray asserts it is a worker), or no runtime context
        return 0.0


def plan_workers(ray, device: str, workers: int | None) -> tuple[int, float, str]:
    """(actors, GPUs per actor, actor device). ``cuda`` (or ``auto`` on a cluster with GPUs): one
    actor per GPU; otherwise ``workers`` CPU actors (default: one per CPU of the cluster). Where the
    task encoding holds every GPU of a local Ray (which never grows), no actor could ever start:
    an error, not a wait without end."""
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    if wants_gpu(device, resources):
        if gpus < 1:
            raise HarnessError(f"device {device!r} asks for GPUs but the Ray cluster has none")
        held = _held_gpus(ray)
        if gpus - held < 1 and raycluster.started_here():
            raise HarnessError(f"device {device!r}: the Ray encoder's actors need a GPU each and the task encoding "
                               f"holds {held:g} of the cluster's {gpus} (another stage of its pipeline runs on one): "
                               "the local Ray started for this bench never has another (use encoder = \"local\" "
                               "there, or join a cluster with --address)")
        return workers or gpus, 1.0, "cuda"
    return workers or max(1, int(resources.get("CPU", 1))), 0.0, "cpu" if device == "auto" else device


def encode_missing(entry: EmbeddingCache, texts: Sequence[str], model: ModelHandle, *, prompt: str | None,
                   batch_size: int, normalize: bool, max_seq_length: int, workers: int | None = None,
                   cpus_per_worker: float = 1.0, address: str | None = None,
                   encoder_cls: type = ChunkEncoder, digest_memo: Path | None = None) -> dict:
    """Encode every chunk of ``entry`` that has no part yet, on the Ray cluster; the parts are
    written by the actors. Returns stats: rows and chunks encoded, actors, seconds. The caller
    then calls ``entry.build(...)``, which finds every part and writes the complete matrix."""
    meta = entry.prepare()
    missing = [i for i in range(entry.n_chunks) if not entry.has_part(i, meta.get("dim"))]
    stats = {"chunks": len(missing), "rows": int(sum(len(entry.chunk_rows(i)) for i in missing)), "actors": 0,
             "seconds": 0.0}
    # the versions the parts of an earlier job record (its driver may have died before recording them)
    written, unrecorded = entry.parts_versions(sorted(set(range(entry.n_chunks)) - set(missing)))
    if not missing:
        if written:
            entry.add_versions({}, earlier=lambda: unrecorded, written=written)
        return stats
    started = time.perf_counter()
    ray = connect(address)
    actors, gpus, device = plan_workers(ray, model.requested_device, workers)
    actors = min(actors, len(missing))
    entry.add_device(device.split(":", 1)[0])  # (before the actors write parts; cuda:1 -> cuda)
    job = EncodeJob(model.name, str(model.folder), device, prompt, batch_size, normalize, max_seq_length,
                    str(Path(entry.folder).resolve()), entry.n_rows, entry.chunk_size, model.digest(digest_memo),
                    str(digest_memo) if digest_memo is not None else None)
    items = [{"chunk": i, "texts": [texts[r] for r in entry.chunk_rows(i).tolist()]} for i in missing]
    # one block per chunk, so that the chunks spread over the actors
    dataset = ray.data.from_items(items, override_num_blocks=len(items))
    done = dataset.map_batches(
        encoder_cls, batch_size=1, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=cpus_per_worker, num_gpus=gpus, fn_constructor_args=(job,))
    rows = list(done.iter_rows())
    # the versions of the actors that wrote parts (each node's environment, not this process's), recorded once
    # the parts are written, with those the parts of an earlier job record (each actor writes its versions in
    # its parts' records: a driver that died before recording them left them there); a part of an earlier job
    # that records none counts as unknown where versions.json holds nothing (cache.record_versions)
    for found in sorted({str(row["versions"]) for row in rows if not row["error"]}):
        entry.add_versions(json.loads(found), earlier=lambda: unrecorded, written=written)
    failed = sorted((int(row["chunk"]), str(row["error"])) for row in rows if row["error"])
    if failed:
        chunk, error = failed[0]
        raise HarnessError(f"Ray encoder failed on chunk {chunk} of {entry.folder} ({len(failed)} of "
                           f"{len(missing)} chunks failed): {error}")
    written = sorted(int(row["chunk"]) for row in rows)
    if written != missing:
        raise HarnessError(f"Ray encoded chunks {written} but {missing} were missing")
    meta = entry.prepare()  # read again: another process filling the entry may have joined it meanwhile
    if meta.get("dim") is None and "complete" not in meta:  # as a local encode records it with its first part
        with contextlib.suppress(OSError, ValueError):  # parts gone: another process joined the entry first
            meta["dim"] = int(np.load(entry.part_path(missing[0]), mmap_mode="r").shape[1])
            write_json(entry.folder / "meta.json", meta)
    stats.update(actors=actors, seconds=round(time.perf_counter() - started, 3))
    return stats
