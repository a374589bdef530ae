"""``harness datasets download NAME`` over a NAME already in the cache, asking for another zip
(harness/datasets/download.py, download and _same_zip).

Seen: ``harness datasets download mine --url .../nfcorpus.zip --sha256 18ce...``, then ``harness datasets
download mine --url .../scifact.zip --sha256 4319...`` printed ``mine: <cache>/datasets/mine``, exit 0,
and ``mine`` went on holding NFCorpus (its DOWNLOAD.json: sha256 18ce...): every ``harness run -d mine``
scored NFCorpus while the user had asked for, and been told of, the other zip. Likewise a registered
name unpacked from a ``--url`` zip and then asked for by name (BEIR's md5). Expected: one line naming
the dataset, the zip it was unpacked from and the one asked for (both checksums), exit 2; nothing
fetched, the folder untouched; ``--force`` replaces it; the same zip asked for again is no error."""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from types import SimpleNamespace

import pytest

from harness.datasets import download as dl
from harness.datasets import load_dataset
from harness.errors import HarnessError
from tests.datasets.http_fixture import FlakyServer
from tests.datasets.test_download import BEIR_NFCORPUS_MD5, cache, nfcorpus_zip  # noqa: F401  (fixtures)
from tests.datasets.test_interrupt_review_download import small_zip


@pytest.fixture
def served(nfcorpus_zip):  # noqa: F811
    with FlakyServer({"nfcorpus.zip": nfcorpus_zip, "small.zip": small_zip()}) as server:
        yield server


def test_another_zip_under_a_downloaded_name_is_refused_until_forced(cache, served, nfcorpus_zip):  # noqa: F811
    first, other = hashlib.sha256(nfcorpus_zip).hexdigest(), hashlib.sha256(small_zip()).hexdigest()
    folder = dl.download("mine", url=served.url("ok", "nfcorpus.zip"), sha256=first, backoff=0)
    served.log.clear()
    with pytest.raises(HarnessError) as err:
        dl.download("mine", url=served.url("ok", "small.zip"), sha256=other, backoff=0)
    message = str(err.value)
    assert message.startswith("mine is already downloaded, unpacked from ")
    assert served.url("ok", "nfcorpus.zip") in message and served.url("ok", "small.zip") in message
    assert f"sha256 {first}" in message and f"sha256 {other}" in message and "--force" in message
    assert "\n" not in message and served.log == []  # nothing fetched
    assert len(load_dataset("mine").corpus) == 3633  # still NFCorpus, untouched
    # the same zip again: done already, no error, nothing fetched
    assert dl.download("mine", url=served.url("ok", "nfcorpus.zip"), sha256=first.upper()) == folder
    assert served.log == []
    # --force replaces it with the zip asked for
    dl.download("mine", url=served.url("ok", "small.zip"), sha256=other, force=True, backoff=0)
    assert json.loads((folder / "DOWNLOAD.json").read_text())["sha256"] == other
    assert load_dataset("mine").corpus.ids == ["d1"]


def test_a_registered_name_unpacked_from_a_url_zip_is_not_taken_for_beirs(cache, served, nfcorpus_zip):  # noqa: F811
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    dl.download("nfcorpus", url=served.url("ok", "nfcorpus.zip"), sha256=sha, backoff=0)
    with pytest.raises(HarnessError) as err:
        dl.download("nfcorpus", mirror=served.base + "/ok", backoff=0)  # BEIR's zip, by its published md5
    message = str(err.value)
    assert f"md5 {hashlib.md5(nfcorpus_zip).hexdigest()}" in message and f"md5 {BEIR_NFCORPUS_MD5}" in message
    assert message.startswith("nfcorpus is already downloaded")
    assert len(served.log) == 1  # the --url download only


def test_the_small_zip_served_is_the_one_whose_sha256_is_asked_for_whatever_the_clock(monkeypatch):
    """The fixture serves one small_zip() and the first test asks for another call's sha256: it failed once under
    load, 'checksum mismatch' at the --force download, when a 2-second tick of the clock (zipfile dates each member
    written by name with it) fell between the two calls."""
    served = small_zip()
    later = time.time() + 61  # another minute, and an odd second
    monkeypatch.setattr(zipfile, "time", SimpleNamespace(time=lambda: later, localtime=time.localtime))
    assert hashlib.sha256(small_zip()).hexdigest() == hashlib.sha256(served).hexdigest()
