"""Dataset downloads against a local HTTP server serving a zip of the real NFCorpus files.

The zip is built here from ../shared/datasets/nfcorpus (the BEIR layout: ``nfcorpus/corpus.jsonl``,
``nfcorpus/queries.jsonl``, ``nfcorpus/qrels/test.tsv``), so its md5 is ours, not BEIR's: tests that
go through the registry point its nfcorpus entry at this zip's md5, and one test checks that BEIR's
real md5 refuses it.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest

from harness.datasets import download as dl
from harness.datasets import load_dataset, registry, resolve
from harness.errors import HarnessError
from tests.datasets.http_fixture import FlakyServer

REPO = Path(__file__).resolve().parents[2]
BEIR_NFCORPUS_MD5 = "a89dba18a62ef92f7d323ec890a0d38d"  # BEIR README, 'Available Datasets' table


@lru_cache(maxsize=2)
def _build_zip(folder: str) -> bytes:
    """The same bytes at every call, cached or not: each member is dated 1980-01-01 (zipfile dates a member
    written by name with the clock; see small_zip in test_interrupt_review_download.py)."""
    folder = Path(folder)
    buffer = io.BytesIO()
    members = {f"nfcorpus/{stem}": gzip.decompress((folder / f"{stem}.gz").read_bytes())
               for stem in ("corpus.jsonl", "queries.jsonl")}
    members["nfcorpus/qrels/test.tsv"] = (folder / "qrels" / "test.tsv").read_bytes()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                             compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
    return buffer.getvalue()


@pytest.fixture
def nfcorpus_zip(nfcorpus_dir) -> bytes:
    return _build_zip(str(nfcorpus_dir))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(dl.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(dl.MIRROR_ENV, raising=False)
    monkeypatch.delenv(dl.OFFLINE_ENV, raising=False)
    return tmp_path / "cache"


@pytest.fixture
def server(nfcorpus_zip):
    with FlakyServer({"nfcorpus.zip": nfcorpus_zip, "custom.zip": nfcorpus_zip}, fail_count=2) as srv:
        yield srv


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def registry_md5(monkeypatch, nfcorpus_zip):
    """Point the registry's nfcorpus md5 at the test zip (the real one is BEIR's zip's)."""
    real = registry._load()
    patched = dict(real, nfcorpus=dataclasses.replace(real["nfcorpus"], md5=_md5(nfcorpus_zip)))
    monkeypatch.setattr(registry, "_load", lambda: patched)


def _leftovers(cache: Path) -> list[str]:
    root = cache / "datasets"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_download_from_mirror_unpacks_and_load_dataset_finds_it(cache, server, registry_md5, nfcorpus_zip):
    folder = dl.download("nfcorpus", mirror=server.base + "/ok", backoff=0)
    assert folder == cache / "datasets" / "nfcorpus"
    assert sorted(p.name for p in folder.iterdir()) == ["DOWNLOAD.json", "corpus.jsonl", "qrels", "queries.jsonl"]
    manifest = json.loads((folder / "DOWNLOAD.json").read_text())
    assert manifest["md5"] == _md5(nfcorpus_zip) and manifest["bytes"] == len(nfcorpus_zip)
    assert manifest["url"] == server.url("ok", "nfcorpus.zip")
    assert not (cache / "datasets" / ".downloads" / "nfcorpus.zip").exists()  # removed once unpacked
    # resolve() finds it by name in the cache; counts from shared/datasets/nfcorpus/PROVENANCE.md.
    assert resolve("nfcorpus") == ("nfcorpus", folder)
    ds = load_dataset("nfcorpus")
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (3633, 323, 12334)
    # A second call finds the folder and asks the server nothing.
    requests_before = len(server.log)
    assert dl.download("nfcorpus", mirror=server.base + "/ok") == folder
    assert len(server.log) == requests_before == 1


def test_mirror_from_environment(cache, server, registry_md5, monkeypatch):
    monkeypatch.setenv(dl.MIRROR_ENV, server.base + "/ok/")
    dl.download("nfcorpus", backoff=0)
    assert server.log == [("ok", "nfcorpus.zip", None)]


def test_checksum_mismatch_is_refused_and_leaves_the_cache_untouched(cache, server):
    # The real registry md5 is BEIR's; the zip we serve is our rebuild, so it must be refused.
    assert registry.lookup("nfcorpus").md5 == BEIR_NFCORPUS_MD5
    with pytest.raises(HarnessError) as err:
        dl.download("nfcorpus", mirror=server.base + "/ok", backoff=0)
    message = str(err.value)
    assert "checksum mismatch" in message and BEIR_NFCORPUS_MD5 in message
    assert _leftovers(cache) in ([], [".downloads", ".downloads/nfcorpus.lock"])


def test_truncated_response_is_resumed_with_a_range_request(cache, server, registry_md5, nfcorpus_zip):
    dl.download("nfcorpus", mirror=server.base + "/truncate", backoff=0)
    # The server sent half the bytes then closed; what reached the .part (whole 64 KiB blocks) is
    # asked for again from that offset, not from zero.
    half = len(nfcorpus_zip) // 2
    assert [entry[:2] for entry in server.log] == [("truncate", "nfcorpus.zip")] * 2
    assert server.log[0][2] is None
    offset = int(server.log[1][2].removeprefix("bytes=").rstrip("-"))
    assert half - (1 << 16) < offset <= half
    assert load_dataset("nfcorpus").corpus.ids[:1] == ["MED-10"]


def test_always_truncated_response_fails_after_retries_without_a_dataset(cache, server, registry_md5):
    with pytest.raises(HarnessError, match="after 2 attempt"):
        dl.download("nfcorpus", mirror=server.base + "/alwayscut", retries=1, backoff=0)
    assert len(server.log) == 2
    assert not (cache / "datasets" / "nfcorpus").exists()
    assert not (cache / "datasets" / ".downloads" / "nfcorpus.zip").exists()


def test_http_500_is_retried_then_succeeds(cache, server, registry_md5):
    dl.download("nfcorpus", mirror=server.base + "/fail500", retries=3, backoff=0)
    assert [entry[0] for entry in server.log] == ["fail500"] * 3  # two 500s (fail_count=2), then the file


def test_http_500_every_time_is_an_error_naming_url_and_folder(cache, server, registry_md5):
    with pytest.raises(HarnessError) as err:
        dl.download("nfcorpus", mirror=server.base + "/always500", retries=2, backoff=0)
    message = str(err.value)
    assert "after 3 attempt(s): HTTP 500" in message
    assert server.url("always500", "nfcorpus.zip") in message
    assert str(cache / "datasets" / ".downloads" / "nfcorpus.zip") in message
    assert len(server.log) == 3
    assert not (cache / "datasets" / "nfcorpus").exists()


def test_http_404_is_not_retried(cache, server, registry_md5):
    with pytest.raises(HarnessError, match="HTTP 404"):
        dl.download("nfcorpus", mirror=server.base + "/missing", retries=3, backoff=0)
    assert len(server.log) == 1


def test_unreachable_host_names_url_and_where_to_place_files(cache, registry_md5):
    url_base = "http://127.0.0.1:9"  # discard port: nothing listens there
    with pytest.raises(HarnessError) as err:
        dl.download("nfcorpus", mirror=url_base, retries=0, timeout=2)
    message = str(err.value)
    assert f"{url_base}/nfcorpus.zip" in message
    assert str(cache / "datasets" / ".downloads" / "nfcorpus.zip") in message
    assert str(cache / "datasets" / "nfcorpus") in message


def test_offline_mode_uses_a_zip_placed_by_hand(cache, registry_md5, nfcorpus_zip, monkeypatch):
    monkeypatch.setenv(dl.OFFLINE_ENV, "1")
    with pytest.raises(HarnessError, match="offline") as err:
        dl.download("nfcorpus")
    assert registry.lookup("nfcorpus").url() in str(err.value)
    placed = cache / "datasets" / ".downloads" / "nfcorpus.zip"
    placed.parent.mkdir(parents=True, exist_ok=True)
    placed.write_bytes(nfcorpus_zip)
    folder = dl.download("nfcorpus")  # checked against the md5 and unpacked; no network
    assert (folder / "corpus.jsonl").stat().st_size == 6219364  # PROVENANCE.md: uncompressed corpus bytes


def test_unregistered_zip_by_url_and_sha256(cache, server, nfcorpus_zip):
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    with pytest.raises(HarnessError, match="checksum mismatch"):
        dl.download("custom", url=server.url("ok", "custom.zip"), sha256="0" * 64, backoff=0)
    assert not (cache / "datasets" / "custom").exists()
    folder = dl.download("custom", url=server.url("ok", "custom.zip"), sha256=sha.upper(), backoff=0)
    assert load_dataset(str(folder)).qrels.grades.size == 12334
    assert load_dataset("custom").name == "custom"  # found by name in the cache too
    with pytest.raises(HarnessError, match="needs --sha256"):
        dl.download("custom2", url=server.url("ok", "custom.zip"))


def test_registered_but_not_downloaded_says_how_to_get_it(cache):
    with pytest.raises(HarnessError, match="harness datasets download fiqa"):
        load_dataset("fiqa")
    with pytest.raises(HarnessError, match="unknown dataset 'nope'"):
        load_dataset("nope")


def test_auto_download_when_allowed(cache, server, registry_md5, monkeypatch):
    monkeypatch.setenv(dl.MIRROR_ENV, server.base + "/ok")
    ds = load_dataset("nfcorpus", download=True)
    assert len(ds.queries) == 323


def test_zip_members_outside_the_folder_are_refused(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../escape.txt", "x")
    with pytest.raises(HarnessError, match="outside the dataset folder"):
        dl.unpack(bad, tmp_path / "target")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "target").exists()


def test_killed_download_leaves_no_dataset_and_the_next_call_completes_it(cache, server, registry_md5,
                                                                          nfcorpus_zip):
    code = ("import sys; from harness.datasets import download as dl; "
            "dl.download('nfcorpus', mirror=sys.argv[1], retries=0)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-c", code, server.base + "/slow"], env=env, cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    part = cache / "datasets" / ".downloads" / "nfcorpus.zip.part"
    deadline = time.monotonic() + 30
    # The child's registry is unpatched, but it is killed long before the end (and the md5 check).
    while time.monotonic() < deadline and not (part.exists() and part.stat().st_size > 200_000):
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    received = part.stat().st_size
    assert 200_000 < received < len(nfcorpus_zip)
    assert not (cache / "datasets" / "nfcorpus").exists()
    assert not (cache / "datasets" / ".downloads" / "nfcorpus.zip").exists()
    folder = dl.download("nfcorpus", mirror=server.base + "/ok", backoff=0)
    assert ("ok", "nfcorpus.zip", f"bytes={received}-") in server.log
    assert json.loads((folder / "DOWNLOAD.json").read_text())["md5"] == _md5(nfcorpus_zip)
    assert not part.exists()


@pytest.mark.parametrize("mirror", ["not a url", "/no/such/folder"])
def test_a_mirror_that_is_no_url_is_named_as_such_not_as_a_checksum_mismatch(cache, registry_md5, mirror):
    # requests' InvalidURL / MissingSchema are ValueErrors, which pooch's hash mismatch also is: the line
    # read "checksum mismatch for not a url/nfcorpus.zip: Invalid URL ..." (cli review)
    with pytest.raises(HarnessError) as caught:
        dl.download("nfcorpus", mirror=mirror, retries=0, backoff=0)
    assert str(caught.value).startswith(f"cannot download {mirror}/nfcorpus.zip: ")
    assert "checksum" not in str(caught.value)


def test_the_help_after_a_failed_url_download_suggests_no_mirror(cache):
    """With --url a mirror is a usage error, so the help line after a failure does not suggest one (it
    did: 'or point HARNESS_BEIR_MIRROR (or --mirror) at a reachable copy'); a registered name's does."""
    url = "http://127.0.0.1:9/custom.zip"  # discard port: nothing listens there
    with pytest.raises(HarnessError) as err:
        dl.download("custom", url=url, sha256="0" * 64, retries=0, timeout=2)
    assert url in str(err.value) and "mirror" not in str(err.value)
    with pytest.raises(HarnessError, match=r"or point HARNESS_BEIR_MIRROR \(or --mirror\) at a reachable copy"):
        dl.download("nfcorpus", mirror="http://127.0.0.1:9", retries=0, timeout=2)


def test_a_download_waiting_for_another_process_says_so(cache, server, registry_md5, caplog):
    # Another process holds the dataset's lock (flock on the lock file: a second open file conflicts, as a
    # second process's would). The waiting call logs one line, as the corpus and index caches' waits do; it
    # printed nothing while it waited (datasets review, session 15), then downloads once the lock is free.
    import fcntl
    import logging
    import threading

    lock = cache / "datasets" / ".downloads" / "nfcorpus.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        done = []
        with caplog.at_level(logging.WARNING, logger="harness.datasets.download"):
            worker = threading.Thread(target=lambda: done.append(dl.download("nfcorpus", mirror=server.base + "/ok",
                                                                             backoff=0)))
            worker.start()
            deadline = time.monotonic() + 30
            while "waiting" not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.log == [] and not done  # still waiting: nothing asked of the server
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)
            worker.join(60)
    assert [r.getMessage() for r in caplog.records] == ["another process is downloading nfcorpus; waiting for it"]
    assert done == [cache / "datasets" / "nfcorpus"] and len(server.log) == 1


def test_a_zip_without_a_corpus_is_refused_before_anything_is_unpacked(tmp_path):
    # A --url zip of another layout (no corpus.jsonl at its top) unpacked "successfully"; every load then said
    # the folder has no corpus.jsonl, and only --force could replace it (datasets review, session 15).
    bad = tmp_path / "other.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("mine/data/docs.jsonl", "{}\n")
        archive.writestr("mine/README", "x")
    with pytest.raises(HarnessError) as err:
        dl.unpack(bad, tmp_path / "target")
    assert str(err.value) == (f"{bad}: no corpus.jsonl (or corpus.jsonl.gz) at its top or in the folders there, as a "
                              "BEIR zip has one; it holds README, data/: nothing was unpacked")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.zip"]  # no target, no temporary folder left
    # BEIR's layouts unpack: a corpus at the top of the zip's folder, or in its forums' folders (CQADupStack)
    forums = tmp_path / "cqa.zip"
    with zipfile.ZipFile(forums, "w") as archive:
        for forum in ("android", "gis"):
            archive.writestr(f"cqadupstack/{forum}/corpus.jsonl", '{"_id": "d", "text": "x"}\n')
    assert sorted(p.name for p in dl.unpack(forums, tmp_path / "cqadupstack").iterdir()) == ["android", "gis"]


def test_a_downloaded_file_changed_in_the_cache_is_refused_when_read(cache, server, registry_md5):
    """A downloaded corpus cut to its first 3,000 lines (an edit, a disk fault) was read as NFCorpus: 3,000 documents,
    lower numbers, and only a warning that judgments name missing documents (probe of 2026-11-29 on SciFact: NDCG@10
    0.6089 for 0.6789). The loader's own checksums are compared with DOWNLOAD.json's (nothing hashed again)."""
    folder = dl.download("nfcorpus", mirror=server.base + "/ok", backoff=0)
    recorded = json.loads((folder / "DOWNLOAD.json").read_text())["files"]["corpus.jsonl"]["sha256"]
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "corpus.jsonl").write_text("".join(lines[:3000]), encoding="utf-8")
    cut = hashlib.sha256("".join(lines[:3000]).encode("utf-8")).hexdigest()
    with pytest.raises(HarnessError) as refused:
        load_dataset("nfcorpus")
    assert str(refused.value) == (f"{folder / 'corpus.jsonl'}: not the file downloaded (DOWNLOAD.json records sha256 "
                                  f"{recorded}; it has {cut}): the dataset's folder in the cache was changed; "
                                  "`harness datasets download nfcorpus --force` fetches it again")
    (folder / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")  # put back: read again
    assert len(load_dataset("nfcorpus").corpus) == 3633
