"""HTTP 408 and 429 are "not now" answers: a download retries them, waiting as long as ``Retry-After`` asks.

Source: RFC 9110 15.5.9 (408 Request Timeout: the client "MAY repeat the request") and RFC 6585 4
(429 Too Many Requests, "MAY include a Retry-After header indicating how long to wait"); RFC 9110 10.2.3
for Retry-After's two forms (delta-seconds, HTTP-date). pip and urllib3's Retry retry 429 the same way.
Before, both were refused at once as any 4xx: `cannot download ...: HTTP 429 Too Many Requests`.
"""

from __future__ import annotations

from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from harness.datasets import download as dl
from harness.errors import HarnessError
from tests.datasets.test_download import cache, nfcorpus_zip, registry_md5, server  # noqa: F401 (fixtures)


@pytest.fixture
def sleeps(monkeypatch):
    """Record the downloader's waits instead of sleeping them (the server's own thread does not sleep here)."""
    waits: list[float] = []
    monkeypatch.setattr(dl.time, "sleep", waits.append)
    return waits


def test_429_is_retried_after_the_seconds_the_server_asks(cache, server, registry_md5, sleeps, caplog):
    with caplog.at_level("WARNING", logger=dl.__name__):
        folder = dl.download("nfcorpus", mirror=server.base + "/fail429", retries=3, backoff=0)
    assert (folder / "corpus.jsonl").is_file()
    assert [entry[0] for entry in server.log] == ["fail429"] * 3  # two 429s (fail_count=2), then the file
    assert sleeps == [2.0, 2.0]  # Retry-After: 2 beats the backoff of 0
    # each wait is said (one of up to 60 s printed nothing: a download that looked hung)
    url = server.url("fail429", "nfcorpus.zip")
    assert [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()] == [
        f"{url}: HTTP 429 Too Many Requests; trying again in 2 s (attempt 2 of 4)",
        f"{url}: HTTP 429 Too Many Requests; trying again in 2 s (attempt 3 of 4)"]


def test_408_is_retried_with_the_backoff(cache, server, registry_md5, sleeps):
    dl.download("nfcorpus", mirror=server.base + "/fail408", retries=3, backoff=0.5)
    assert [entry[0] for entry in server.log] == ["fail408"] * 3
    assert sleeps == [0.5, 1.0]  # no Retry-After: backoff * 2 ** (attempt - 1)


def test_429_every_time_waits_at_most_the_cap_and_names_the_status(cache, server, registry_md5, sleeps):
    with pytest.raises(HarnessError) as err:
        dl.download("nfcorpus", mirror=server.base + "/always429", retries=2, backoff=0)
    assert "after 3 attempt(s): HTTP 429 Too Many Requests" in str(err.value)
    assert server.url("always429", "nfcorpus.zip") in str(err.value)
    assert sleeps == [dl.MAX_RETRY_AFTER] * 2 == [60.0, 60.0]  # Retry-After: 3600, capped
    assert not (cache / "datasets" / "nfcorpus").exists()


def test_retry_after_forms():
    assert dl._retry_after("7") == 7.0
    assert dl._retry_after(None) is None
    assert dl._retry_after("soon") is None
    assert dl._retry_after("-3") is None  # not delta-seconds (digits only)
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    assert 25 <= dl._retry_after(format_datetime(later, usegmt=True)) <= 30
    earlier = datetime.now(timezone.utc) - timedelta(seconds=30)
    assert dl._retry_after(format_datetime(earlier, usegmt=True)) == 0.0


def test_retry_after_digits_are_ascii_only():
    # RFC 9110 5.6.7 / 10.2.3: delta-seconds = 1*DIGIT (ASCII 0-9). Header values are decoded as latin-1, so a
    # server's byte 0xB2 arrives as '²', which str.isdigit() accepts and float() refuses: the download ended in
    # "ValueError: could not convert string to float: '²'" instead of a retry. Unreadable: None (the backoff).
    assert dl._retry_after("\xb2") is None
    assert dl._retry_after("3\xb3") is None
    assert dl._retry_after("\u0661\u0662") is None  # Arabic-Indic 12: not delta-seconds either
    assert dl._retry_after(" 12 ") == 12.0
