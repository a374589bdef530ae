"""The ``harness`` console script keeps glibc's freed memory in the process (harness/allocator.py): set once, first,
and left alone where the user chose glibc's settings or ``HARNESS_MALLOC=default``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import allocator

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                           reason="glibc's mallopt: Linux with glibc only")


def _in_a_process(env: dict) -> str:
    """keep_freed_memory()'s answer in a fresh interpreter (the test process's own allocator left as it is)."""
    clean = {k: v for k, v in os.environ.items() if k not in (allocator.SWITCH, *allocator.USER_SETTINGS)}
    done = subprocess.run([sys.executable, "-c", "from harness.allocator import keep_freed_memory; "
                           "print(keep_freed_memory())"], env={**clean, **env}, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


@glibc
def test_glibc_takes_the_thresholds():
    assert _in_a_process({}) == "True"


@pytest.mark.parametrize("env", [{"HARNESS_MALLOC": "default"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"},
                                 {"MALLOC_TRIM_THRESHOLD_": "1000"}, {"MALLOC_MMAP_THRESHOLD_": "1000"}])
def test_the_users_own_settings_are_left_alone(env):
    assert _in_a_process(env) == "False"


FREED = """
import ctypes, sys
from harness.allocator import keep_freed_memory
if sys.argv[1] == "kept":
    assert keep_freed_memory()
libc = ctypes.CDLL(None)
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = Info
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(4 << 20) for _ in range(8)]
for b in blocks:
    ctypes.memset(b, 1, 4 << 20)
for b in blocks:
    libc.free(b)
print(libc.mallinfo2().fordblks >> 20)
"""


@glibc
@pytest.mark.parametrize("mode", ["kept", "default"])
def test_freed_blocks_stay_in_the_process(mode):
    """Eight 4 MiB blocks written and freed: glibc's default maps each on its own and unmaps it when freed (a
    fresh one is fresh pages again); kept, the 32 MiB stay free in the heap (mallinfo2's fordblks, MiB)."""
    clean = {k: v for k, v in os.environ.items() if k not in (allocator.SWITCH, *allocator.USER_SETTINGS)}
    done = subprocess.run([sys.executable, "-c", FREED, mode], env=clean, capture_output=True, text=True, check=True)
    free_mib = int(done.stdout)
    assert free_mib >= 32 if mode == "kept" else free_mib < 4


def test_the_console_script_sets_them_once(monkeypatch):
    from harness import entry

    calls = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append(True))
    monkeypatch.setattr(sys, "argv", ["harness", "--version"])
    with pytest.raises(SystemExit):
        entry.main()
    assert calls == [True]
