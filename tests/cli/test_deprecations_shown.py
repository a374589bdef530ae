"""A deprecated name typed on the command line is warned about there (NFCorpus review: `-p backend=bm25s`
ran silently, while docs/bm25.md says it is accepted with a DeprecationWarning, which Python's default
filters hide outside __main__)."""

from __future__ import annotations

import subprocess
import sys


def test_a_deprecated_backend_name_is_one_warning_line(tmp_path):
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HARNESS_PROGRESS": "0"}
    done = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "run", "-d", "scifact",
                           "-r", "bm25", "-p", "backend=bm25s", "--k", "10", "-o", str(tmp_path / "out"), "-q"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["warning: BM25 backend 'bm25s' is now called 'lucene' (deprecated)"]
    done = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "run", "-d", "scifact",
                           "-r", "bm25", "--k", "10", "-o", str(tmp_path / "out2"), "-q"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
