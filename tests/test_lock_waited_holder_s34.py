"""The message said while waiting for a build lock names who holds it: another process, or this process's
own earlier write on a background thread (a benchmark's next cell loading an entry the last one is still
writing). It said "another process" either way, beside a warning naming this process's pid as the holder."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading

from harness.atomic import build_lock, waited_holder


def _wait_message(path, caplog) -> str:
    seen = []
    with caplog.at_level(logging.WARNING):
        release = build_lock(path, on_wait=lambda: seen.append(f"{waited_holder()} is building X"))
    release()
    assert waited_holder() == "another process"  # (outside a wait: the default)
    return seen[0]


def test_this_process_s_own_background_write(tmp_path, caplog):
    path = tmp_path / "entry.lock"
    release = build_lock(path)
    threading.Timer(0.3, release).start()
    assert _wait_message(path, caplog) == "this process's earlier write (under way on another thread) is building X"


def test_another_process(tmp_path, caplog):
    path = tmp_path / "entry.lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from harness.atomic import build_lock
        release = build_lock({str(path)!r})
        print("held", flush=True)
        time.sleep(0.5)
        release()
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert _wait_message(path, caplog) == "another process is building X"
    finally:
        holder.wait(timeout=30)
        holder.stdout.close()

