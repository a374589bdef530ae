"""The hardware and software a result was measured on, as a JSON-able dict.

::

    {"cpu": {"model", "cores", "machine"}, "ram_bytes", "gpu": [names] | None, "os", "python",
     "libraries": {name: version}, "git": {"commit", "dirty"} | None}

``cpu.model`` comes from ``/proc/cpuinfo`` (Linux) or ``platform.processor()``; ``cores`` is
``os.cpu_count()``; ``ram_bytes`` is the physical memory (``sysconf``). ``gpu`` lists the CUDA
devices only when torch is *already imported* (reading it never imports torch, which costs seconds).
``libraries`` are those of :func:`harness.versions.versions`. ``git`` is the commit of the working
tree holding the harness source (``dirty``: tracked files modified), None outside git, without git,
or where git does not track the harness source (installed inside another project's working tree).
Nothing here raises: an unreadable fact is None.

:func:`hardware` is the part that makes timings comparable; results whose hardware differs are
flagged by ``compare``, ``check`` and the leaderboard.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

HARDWARE_KEYS = ("cpu", "ram_bytes", "gpu")
# What points git at another repository, index or work tree than the one its working directory is in
# (``git rev-parse --local-env-vars``, less the config ones; git clears them to enter a submodule).
# git exports GIT_DIR, GIT_INDEX_FILE ... to its hooks (githooks(5)): inherited by a benchmark that a
# project's hook runs, they made :func:`git_commit` record that project's commit, even for a harness
# that no git tracks.
_GIT_LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                      "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_GRAFT_FILE",
                      "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX",
                      "GIT_SHALLOW_FILE")


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, sep, value = line.partition(":")
                if sep and key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return value.strip() or None
    except OSError:
        pass
    return platform.processor() or None


def _ram_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _gpus() -> list[str] | None:
    torch = sys.modules.get("torch")  # never import torch just to ask
    try:
        if torch is not None and torch.cuda.is_available():
            return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception:  # noqa: BLE001 - a broken CUDA setup only loses this fact
        pass
    return None


def git_commit(folder: str | Path | None = None) -> dict | None:
    """``{"commit", "dirty"}`` of the git working tree holding ``folder`` (default: the harness source);
    None when git tracks no file of ``folder`` there (the harness installed in a virtual environment
    inside another project's working tree: that project's commit is not the harness's). The repository
    is the one ``folder`` is in, whatever ``$GIT_DIR`` and the like say (:data:`_GIT_LOCATION_VARS`)."""
    folder = Path(folder) if folder is not None else Path(__file__).resolve().parent
    env = {name: value for name, value in os.environ.items() if name not in _GIT_LOCATION_VARS}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=5,
                              env=env)
        if head.returncode != 0:
            return None
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "--", "."], cwd=folder,
                                 capture_output=True, timeout=5, env=env)
        if tracked.returncode != 0:
            return None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                                capture_output=True, text=True, timeout=5, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return {"commit": head.stdout.strip(), "dirty": dirty}


@lru_cache(maxsize=1)
def harness_commit() -> dict | None:
    """:func:`git_commit` of the harness source, read once per process (fingerprints and metrics.json's
    ``versions.git``, :func:`harness.versions.recorded`)."""
    return git_commit()


@lru_cache(maxsize=1)
def _static() -> dict:
    from harness.versions import versions

    return {"cpu": {"model": _cpu_model(), "cores": os.cpu_count(), "machine": platform.machine() or None},
            "ram_bytes": _ram_bytes(), "os": platform.platform(), "python": platform.python_version(),
            "libraries": versions(), "git": harness_commit()}


def fingerprint() -> dict:
    """The machine and software of this process (see the module docstring); read once (~0.05 s of git
    calls and package metadata), when a result is written, after its timed stages: read on a thread
    during them, it slowed them (SciFact's index stage 5 ms -> 11 ms, so two identical runs differed in
    the latency gate)."""
    static = _static()
    return {"cpu": dict(static["cpu"]), "ram_bytes": static["ram_bytes"], "gpu": _gpus(), "os": static["os"],
            "python": static["python"], "libraries": dict(static["libraries"]),
            "git": dict(static["git"]) if static["git"] else None}


def hardware(fp: dict | None) -> dict | None:
    """The hardware part of a fingerprint (CPU, RAM, GPU); None without a fingerprint."""
    if not isinstance(fp, dict):
        return None
    return {key: fp.get(key) for key in HARDWARE_KEYS}


def describe_hardware(hw: dict | None) -> str:
    """One line: ``CPU model (N cores), R GiB RAM[, GPU]``."""
    if not hw:
        return "unknown hardware"
    cpu = hw.get("cpu") or {}
    ram = hw.get("ram_bytes")
    parts = [f"{cpu.get('model') or 'unknown CPU'} ({cpu.get('cores')} cores)",
             f"{ram / 2 ** 30:.1f} GiB RAM" if ram else "RAM unknown"]
    if hw.get("gpu"):
        parts.append(", ".join(hw["gpu"]))
    return ", ".join(parts)
