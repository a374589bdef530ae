"""A download into a full cache disk names the file it could not write (harness/datasets/download.py,
ResumableDownloader._transfer and unpack), and a rerun with space resumes and completes it.

Seen with ``HARNESS_CACHE_DIR`` on a 1 MB tmpfs and a 2 MB NFCorpus zip served on 127.0.0.1:
``harness datasets download nfc --url ... --sha256 ...`` printed ``error: [Errno 28] No space left on
device`` (the write into ``.downloads/nfc.zip.part`` names no file); on a 5 MB one (the zip fits, its
6.5 MB of text does not) the unpack failed the same way. Expected (the CLI's rule, one line naming
the file): ``error: <cache>/datasets/.downloads/nfc.zip.part: No space left on device``, and
``error: <cache>/datasets/<name>: No space left on device`` for the unpack; no dataset folder; the
bytes received kept, so the next call (with space) resumes with a Range request."""

from __future__ import annotations

import errno
import hashlib
import os
import zipfile

import pytest

from harness.cli import os_error_line
from harness.datasets import download as dl
from tests.datasets.test_download import cache, nfcorpus_zip, server  # noqa: F401  (fixtures)


class _FullDisk:
    """An open file that takes ``room`` bytes, then fails as a full disk's write does (no file named)."""

    def __init__(self, handle, room: int):
        self.handle, self.room = handle, room

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            self.handle.write(data[:self.room])
            self.handle.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)


def test_a_full_disk_names_the_part_file_and_the_rerun_resumes(cache, server, nfcorpus_zip,  # noqa: F811
                                                               monkeypatch):
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    url = server.url("ok", "custom.zip")
    monkeypatch.setattr(dl, "open", lambda path, mode: _FullDisk(open(path, mode), 1 << 20), raising=False)
    with pytest.raises(OSError) as info:
        dl.download("custom", url=url, sha256=sha, retries=0)
    part = cache / "datasets" / ".downloads" / "custom.zip.part"
    assert os_error_line(info.value) == f"{part}: No space left on device"
    assert part.stat().st_size == 1 << 20 and not (cache / "datasets" / "custom").exists()
    monkeypatch.delattr(dl, "open")  # space again
    folder = dl.download("custom", url=url, sha256=sha, retries=0)
    assert server.log[-1] == ("ok", "custom.zip", f"bytes={1 << 20}-")  # resumed where the full disk stopped
    assert dl.manifest("custom")["sha256"] == sha and (folder / "corpus.jsonl").is_file()


def test_a_full_disk_while_unpacking_names_the_dataset_folder(cache, server, nfcorpus_zip,  # noqa: F811
                                                              monkeypatch):
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    real = zipfile.ZipFile.extractall

    def full(self, path=None, members=None, pwd=None):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(zipfile.ZipFile, "extractall", full)
    with pytest.raises(OSError) as info:
        dl.download("custom", url=server.url("ok", "custom.zip"), sha256=sha, retries=0)
    assert os_error_line(info.value) == f"{cache / 'datasets' / 'custom'}: No space left on device"
    assert sorted(p.name for p in (cache / "datasets").iterdir()) == [".downloads"]  # no partial dataset folder
    monkeypatch.setattr(zipfile.ZipFile, "extractall", real)
    requests = len(server.log)
    folder = dl.download("custom", url=server.url("ok", "custom.zip"), sha256=sha, retries=0)
    assert len(server.log) == requests  # the verified zip was kept: unpacked without a new download
    assert (folder / "corpus.jsonl").is_file()
