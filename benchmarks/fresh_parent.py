"""Keeping a benchmark's own process small, so that its children's peak RSS is theirs.

On Linux a child's ``ru_maxrss`` (``os.wait4``) is at least its parent's peak RSS at the fork: the
address space a child replaces at ``exec`` is the parent's (``vfork``, as ``subprocess`` uses) or a
copy of it, and its high-water mark is carried over into the child's. A benchmark that generated a
1M-document corpus in its own process (~670 MiB) then reported 670 MiB for every process it timed,
``harness load warm`` included, which peaks at ~90 MiB. So the generators run in a child of their own
(:func:`generate_in_child`), and :func:`floor_note` says when a reading may still be this floor.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate_in_child(module: str, folder: Path, n_docs: int) -> None:
    """``<module>.generate(folder, n_docs)`` (a script of this folder) in a fresh interpreter."""
    code = (f"import sys; from pathlib import Path; sys.path.insert(0, {str(HERE)!r}); "
            f"from {module} import generate; generate(Path(sys.argv[1]), int(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, str(folder), str(n_docs)], check=True)


def own_peak_mib() -> float:
    """This process's peak RSS, MiB: the least any child started now can report."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def floor_note(peaks_mib: list[float]) -> str | None:
    """A line when some reading is within 1 MiB of this process's own peak (so it may be that floor)."""
    own = own_peak_mib()
    if any(peak <= own + 1 for peak in peaks_mib):
        return (f"note: peak RSS readings at or below {own:,.0f} MiB are this script's own peak, which a "
                f"child's ru_maxrss counts: such a process used that much or less")
    return None
