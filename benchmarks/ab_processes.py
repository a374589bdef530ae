"""Two versions of the harness, the same command, whole processes interleaved: before / after figures.

    PYTHONPATH=. python benchmarks/ab_processes.py --base /tmp/basepkg [--pairs 8] [--cold] \\
        -- run -d /tmp/harness-load-scale-zipf/1000000-gz -r bm25 -q

The arguments after ``--`` go to ``harness`` (``python -m harness``). ``--base`` is a folder holding
the other version's ``harness`` and ``retrievers`` packages, e.g. made with::

    git worktree add /tmp/wt-base <rev> && cd /tmp/wt-base && \\
        pip install --no-deps --no-build-isolation --target /tmp/basepkg .

and put first on ``PYTHONPATH`` for the "base" processes; the "new" ones run this interpreter's
installed version. Each pair runs base then new, each a fresh interpreter, both with the same
``$HARNESS_CACHE_DIR`` (``--cache``; with ``--cold`` emptied before every process) and each with its
own ``-o`` folder under ``--out``. Printed per process: wall seconds, CPU seconds (user + system,
``os.wait4``) and peak RSS; then the means, with and without the first pair (the first process
after a pause reads pages the VM evicted). Machines here are shared: compare only the two columns of
one run, never seconds across runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(argv: list[str], env: dict) -> tuple[float, float, float]:
    started = time.perf_counter()
    # cwd: an empty folder, not a checkout (``-m`` puts the working folder first on sys.path)
    proc = subprocess.Popen(argv, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="folder with the base version's packages")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--cold", action="store_true", help="empty the cache folder before every process")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/harness-ab-cache"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/harness-ab-results"))
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the harness arguments")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the harness command after --")
    if not (args.base / "harness").is_dir():
        parser.error(f"{args.base} holds no harness package")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HARNESS_CACHE_DIR"] = str(args.cache)
    versions = {"base": dict(env, PYTHONPATH=str(args.base.resolve())),
                "new": {k: v for k, v in env.items() if k != "PYTHONPATH"}}
    for name, version_env in versions.items():  # each process must import the version it stands for
        where = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"], env=version_env,
                               cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True).stdout.strip()
        print(f"{name}: {where}")
    rows: dict[str, list[tuple[float, float, float]]] = {"base": [], "new": []}
    for pair in range(args.pairs):
        for name, version_env in versions.items():
            if args.cold:
                shutil.rmtree(args.cache, ignore_errors=True)
            args.cache.mkdir(parents=True, exist_ok=True)
            argv = [sys.executable, "-m", "harness", *command, "-o", str(args.out / name)]
            wall, cpu, peak = run_once(argv, version_env)
            rows[name].append((wall, cpu, peak))
            print(f"pair {pair + 1:2d} {name:4s} {wall:7.2f} s  CPU {cpu:6.2f} s  peak {peak:8,.0f} MiB", flush=True)
    for name, values in rows.items():
        for label, part in (("all", values), ("without pair 1", values[1:])):
            if part:
                n = len(part)
                print(f"{name:4s} {label:15s} mean {sum(w for w, _, _ in part) / n:7.3f} s  "
                      f"CPU {sum(c for _, c, _ in part) / n:6.2f} s  peak {max(p for _, _, p in part):8,.0f} MiB  ({n} runs)")


if __name__ == "__main__":
    main()
