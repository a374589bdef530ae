"""Interruption review of dataset downloads (harness/datasets/download.py): a process killed at any
moment must not leave files that pile up in the cache."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from harness.datasets import download as dl
from tests.datasets.http_fixture import FlakyServer

REPO = Path(__file__).resolve().parents[2]


def small_zip() -> bytes:
    """The same bytes at every call: each member is dated 1980-01-01. (Written by name, zipfile dates a member
    with the clock, to 2 s: a test that served one call's zip and asked for another call's sha256 failed with
    'checksum mismatch' when a 2-second tick fell between the two calls, as it does now and then under load.)"""
    members = {"custom/corpus.jsonl": '{"_id": "d1", "title": "", "text": "a b"}\n',
               "custom/queries.jsonl": '{"_id": "q1", "text": "a"}\n',
               "custom/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n"}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def test_a_download_killed_while_its_checksum_is_checked_leaves_nothing_behind(tmp_path, monkeypatch):
    """SIGKILL while pooch hashes the complete zip (its temporary file holds the whole zip: 1 GB for
    MS MARCO) left .downloads/tmpXXXXXXXX for ever (pooch names it without a process id, so no later
    call could tell it from another download's live file); one more per such kill, and an empty one
    per kill during the transfer (seen: 3 in 15 random kills). Expected: the next download completes
    and .downloads holds only the lock file."""
    data = small_zip()
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    monkeypatch.setenv(dl.CACHE_ENV, str(cache))
    monkeypatch.delenv(dl.OFFLINE_ENV, raising=False)
    code = ("import os, signal, sys; import pooch.core as core\n"
            "core.hash_matches = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # killed while hashing\n"
            "from harness.datasets import download as dl\n"
            "dl.download('custom', url=sys.argv[1], sha256=sys.argv[2], retries=0)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), **{dl.CACHE_ENV: str(cache)})
    with FlakyServer({"custom.zip": data}) as server:
        url = server.url("ok", "custom.zip")
        child = subprocess.run([sys.executable, "-c", code, url, sha], env=env, cwd=REPO, timeout=60,
                               capture_output=True)
        assert child.returncode == -9, child.stderr
        assert not (cache / "datasets" / "custom").exists()
        folder = dl.download("custom", url=url, sha256=sha, backoff=0)
    assert (folder / "corpus.jsonl").is_file()
    assert sorted(p.name for p in (cache / "datasets" / ".downloads").iterdir()) == ["custom.lock"]
