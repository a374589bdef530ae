"""The per-stage run cache: ``<cache root>/pipelines/<key[:2]>/<key>.trec`` and ``<key>.json``.

A stage's key is the sha256 of what determines its run: the stage's type, component, config and
resolved parameters, depth, fusion settings (and optimisation qrels' checksum), the keys of its
input stages (so a changed first stage changes every later key), the dataset's split and file
checksums, and the identical-id rule. The stage's name is not part of it (renaming a stage reuses
its run). Both files are written atomically, the run first and the JSON (timings, stats) last, so
an entry is complete exactly when its JSON exists; an interrupted pipeline leaves only complete
entries, and a rerun reuses them ("hit").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.atomic import write_json
from harness.cache import cache_dir
from harness.run import Run

KIND = "pipelines"


def stage_key(blob: dict) -> str:
    text = json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StageCache:
    """Stage runs by key under ``folder`` (default: the harness cache root's ``pipelines/``)."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else cache_dir(KIND)

    def paths(self, key: str) -> tuple[Path, Path]:
        base = self.folder / key[:2] / key
        return base.with_suffix(".trec"), base.with_suffix(".json")

    def load(self, key: str) -> tuple[Run, dict] | None:
        """The cached run and its record, or None when absent or unreadable (then it is recomputed)."""
        from harness.errors import HarnessError
        from harness.formats.trec import read_run

        run_path, meta_path = self.paths(key)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            return read_run(run_path), meta if isinstance(meta, dict) else {}
        except (OSError, ValueError, HarnessError):
            return None

    def store(self, key: str, run: Run, meta: dict) -> None:
        from harness.formats.trec import write_run

        run_path, meta_path = self.paths(key)
        run_path.parent.mkdir(parents=True, exist_ok=True)
        write_run(run, run_path, tag=key[:12])
        write_json(meta_path, meta)
