"""A full disk while an output is written names the output (harness/atomic.py, name_output).

A write, flush or fsync on a descriptor fails with an OSError that names no file, so ``harness run -o
/mnt/small`` (a 3 MB tmpfs, NFCorpus with --depth 1000: run.trec is ~13 MB) printed only
``error: [Errno 28] No space left on device``: not which output, nor on which disk. Expected (the
CLI's rule for an unwritable output, harness.cli.os_error_line): ``error: <folder>/run.trec: No space
left on device``, exit 2, and no temporary file left behind."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap

import pytest

from harness.atomic import atomic_open, atomic_path
from harness.cli import os_error_line
from tests.bench.bench_helpers import write_tiny


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_failed_write_names_the_output(tmp_path, code):
    target = tmp_path / "run.trec"
    with pytest.raises(OSError) as info:
        with atomic_open(target) as handle:
            handle.write("q1 Q0 d1 1 1.0 t\n")
            raise OSError(code, os.strerror(code))  # what the write of a full disk's file raises
    assert os_error_line(info.value) == f"{target}: {os.strerror(code)}"
    assert list(tmp_path.iterdir()) == []  # (the temporary file is removed)
    with pytest.raises(OSError) as info:
        with atomic_path(tmp_path / "x.arrow"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert os_error_line(info.value) == f"{tmp_path / 'x.arrow'}: No space left on device"


def test_other_errors_are_left_as_they_are(tmp_path):
    with pytest.raises(OSError) as info:
        with atomic_open(tmp_path / "out.json"):
            raise OSError(errno.ECONNRESET, os.strerror(errno.ECONNRESET))  # (not a write of the file)
    assert info.value.filename is None


FULL_DISK_AT_RUN_TREC = textwrap.dedent("""
    import errno, os, sys
    import harness.formats.trec as trec
    def write_run_to(run, handle, tag="harness"):
        handle.write("q1 Q0 d1 1 1.0 t\\n")
        handle.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    trec.write_run_to = write_run_to
    from harness.cli import main
    sys.argv = ["harness", *sys.argv[1:]]
    main()
""")


def test_harness_run_on_a_full_disk_names_the_file(tmp_path):
    write_tiny(tmp_path / "tiny")
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-c", FULL_DISK_AT_RUN_TREC, "run", "-d", str(tmp_path / "tiny"),
                           "-r", "bm25", "-p", "cache=false", "--k", "1", "-o", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {out / 'tiny' / 'bm25' / 'run.trec'}: No space left on device\n"
    assert sorted(p.name for p in (out / "tiny" / "bm25").iterdir()) == [".lock"]  # no run.trec, no temporary
