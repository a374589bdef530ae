"""glibc's malloc, in a ``harness`` command, keeps memory it frees for the command's next allocations.

By default glibc gives freed memory back to the kernel at once: a block of 128 KiB or more (up to 32 MiB, by a
threshold it raises as such blocks are freed) is its own ``mmap`` and unmapped when freed, and the top of the heap
is trimmed once 128 KiB (then twice that threshold) lie free there. A cold ``harness run`` allocates and frees such
blocks all along: the compiled corpus parse makes new column buffers for every 2 MiB read, the BM25 encoder's parts
come and go, numpy's temporaries. Each comes back as fresh pages from the kernel, and on the virtual machines this
project runs on a fresh page is dear (the host takes freed memory back at once: docs/bm25.md, the twenty-sixth
session). Kept in the process instead (:func:`keep_freed_memory`: ``mallopt`` with ``M_MMAP_THRESHOLD`` 32 MiB, the
largest glibc takes, and ``M_TRIM_THRESHOLD`` 512 MiB), a cold 1M-document run took ~241,000 page faults instead of
~307,000, and less time in 13 of 18 alternated pairs (median 4.83 s against 4.93 s); its peak RSS rose by 10-85 MiB
(docs/bm25.md, the thirty-second session).

Called once, first thing, by the ``harness`` console script (:mod:`harness.entry`); not by the library (a program
that imports the harness keeps its own allocator settings). Left alone where the user set glibc's own tunables
(``GLIBC_TUNABLES``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``) or ``HARNESS_MALLOC=default``, and off
glibc (``mallopt`` missing or refusing: nothing changes).
"""

from __future__ import annotations

import os
import sys

MMAP_THRESHOLD = 32 << 20  # blocks smaller than this come from the heap (glibc's largest: DEFAULT_MMAP_THRESHOLD_MAX)
TRIM_THRESHOLD = 512 << 20  # free memory at the heap's top given back once it exceeds this
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
SWITCH = "HARNESS_MALLOC"  # "default": glibc's own behaviour
USER_SETTINGS = ("GLIBC_TUNABLES", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")


def keep_freed_memory() -> bool:
    """Set glibc's thresholds (module docstring); whether they were set."""
    if not sys.platform.startswith("linux") or os.environ.get(SWITCH) == "default" \
            or any(os.environ.get(name) for name in USER_SETTINGS):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
