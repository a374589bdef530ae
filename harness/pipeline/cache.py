"""The per-stage run cache: ``<cache root>/pipelines/<key[:2]>/<key>.trec`` and ``<key>.json``.

A stage's key is the sha256 of what determines its run: the stage's type, component, config and
resolved parameters (a computed run is stored under its component's parameters as reported once the
run is made, e.g. the sha256 of the run file ``run-file`` read, so that a file rewritten between the
lookup and the read is not stored under the old content's key), depth, fusion settings (and
optimisation qrels' checksum), the keys of its
input stages (so a changed first stage changes every later key), the dataset's split and file
checksums, the identical-id rule, and the harness's version and :data:`RUNS_VERSION` (a run of other
code is computed again), and for a plugin component its release and code digest
(:func:`harness.plugin_code.plugin_code`: an edited plugin's stage is computed again). The stage's name is not part of it (renaming a stage reuses
its run). Both files are written atomically, the run first and the JSON (timings, stats, and the
run file's size and sha256) last, so an entry is complete exactly when its JSON exists; an
interrupted pipeline leaves only complete entries, and a rerun reuses them ("hit"). A run file that
does not match the size and sha256 its JSON records (truncated, damaged, or replaced by another
process's write) is recomputed, never read: a run cut at a line boundary still parses, with
documents missing. A store that fails (a read-only or full cache disk) is logged and the run goes on
with the stage's run uncached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path

from harness.atomic import remove_abandoned, write_json
from harness.cache import cache_dir
from harness.run import Run
# In every key, with the harness's version (a component's code is not in its params); defined and documented
# in harness.versions (the keys before it named no version, and their stale runs were read back as hits).
from harness.versions import RUNS_VERSION

KIND = "pipelines"
log = logging.getLogger(__name__)
RUN_FILE = "run_file"  # the JSON's record of the run file: {"bytes": size, "sha256": hex digest}


def stage_key(blob: dict) -> str:
    import harness

    blob = {**blob, "harness": harness.__version__, "runs_version": RUNS_VERSION}
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
            if not isinstance(meta, dict) or meta.pop(RUN_FILE, None) != _describe(run_path):
                return None
            return read_run(run_path), meta
        except (OSError, ValueError, HarnessError):
            return None

    def store(self, key: str, run: Run, meta: dict) -> str | None:
        """Cache the stage's run; None when it was written, else why not. A write that fails (a read-only
        or full cache disk) is logged and leaves no entry: the stage's run, computed already, is used
        uncached, as the corpus and BM25 caches do, rather than the pipeline failing as if the stage had."""
        from harness.formats.trec import write_run

        run_path, meta_path = self.paths(key)
        try:
            run_path.parent.mkdir(parents=True, exist_ok=True)
            remove_abandoned(run_path.parent)  # a killed store's temporary run file (45 MB at 1,000 x 1,000)
            write_run(run, run_path, tag=key[:12])
            write_json(meta_path, {**meta, RUN_FILE: _describe(run_path)})
        except OSError as exc:
            log.warning("could not write the pipeline stage cache under %s: %s", self.folder, exc)
            with contextlib.suppress(OSError):  # (a run file without its JSON is no entry, only space)
                run_path.unlink(missing_ok=True)
            return exc.strerror or str(exc)
        return None


def _describe(path: Path) -> dict:
    """``{"bytes": size, "sha256": hex digest}`` of the file at ``path`` (both of one open file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": size, "sha256": digest.hexdigest()}
