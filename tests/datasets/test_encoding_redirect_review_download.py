"""Downloads from servers that gzip their answers, and redirect loops (harness/datasets/download.py,
ResumableDownloader).

Seen with a 127.0.0.1 server that compresses its answers when the request accepts gzip (as nginx's or
Apache's compression does for the types it is set for) and the 2,095,776-byte NFCorpus zip built from
shared/datasets/nfcorpus: ``harness datasets download nfc --url .../nfcorpus.zip --sha256 ...`` failed
after 4 attempts with ``body cut short: 2095776 of 2094964 bytes``: requests asked for gzip (its default
Accept-Encoding) and wrote the decoded bytes, which were compared with the Content-Length of the
encoded ones (and a Range offset counts encoded bytes too). Expected: the zip's own bytes, asked for
with ``Accept-Encoding: identity``; a server that encodes all the same is read whole, its length not
compared (the sha256 checks the result).

A server that redirects for ever printed ``error: Exceeded 30 redirects.`` (requests' TooManyRedirects,
an OSError, reached the CLI bare): no URL, no dataset. Expected: one line naming the URL, exit 2.
"""

from __future__ import annotations

import hashlib

import pytest

from harness.datasets import download as dl
from harness.datasets import load_dataset
from harness.errors import HarnessError
from tests.datasets.test_download import cache, nfcorpus_zip, server  # noqa: F401  (fixtures)


def test_a_server_that_gzips_its_answers_gives_the_zip_in_one_request(cache, server, nfcorpus_zip):  # noqa: F811
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    folder = dl.download("nfc", url=server.url("gzip", "custom.zip"), sha256=sha, retries=1, backoff=0)
    assert [entry[:2] for entry in server.log] == [("gzip", "custom.zip")]  # asked once: no retry
    # shared/datasets/nfcorpus/PROVENANCE.md: 6,219,364 bytes of corpus.jsonl; BEIR: 3,633 documents,
    # 323 test queries, 12,334 judgments
    assert (folder / "corpus.jsonl").stat().st_size == 6219364
    ds = load_dataset(str(folder))
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (3633, 323, 12334)


def test_a_server_that_gzips_whatever_is_asked_is_read_whole(cache, server, nfcorpus_zip):  # noqa: F811
    """Encoded all the same: a part left by an earlier, killed download cannot be resumed (the answer's
    offsets count encoded bytes), so it is read again from the start; the sha256 checks the result."""
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    part = cache / "datasets" / ".downloads" / "nfc.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(nfcorpus_zip[:100_000])
    folder = dl.download("nfc", url=server.url("gzipalways", "custom.zip"), sha256=sha, retries=1, backoff=0)
    assert server.log == [("gzipalways", "custom.zip", "bytes=100000-"), ("gzipalways", "custom.zip", None)]
    assert (folder / "corpus.jsonl").stat().st_size == 6219364
    assert len(load_dataset(str(folder)).qrels) == 12334
    assert not part.exists()


def test_a_redirect_loop_is_one_line_naming_the_url(cache, server, monkeypatch, capsys):  # noqa: F811
    url = server.url("redirectloop", "custom.zip")
    with pytest.raises(HarnessError) as err:
        dl.download("nfc", url=url, sha256="0" * 64, retries=3, backoff=0)
    assert str(err.value).startswith(f"cannot download {url}: TooManyRedirects: Exceeded 30 redirects. ")
    assert "attempt" not in str(err.value)  # not retried: the same loop again
    assert len(server.log) == 31  # the request and requests' 30 redirects, once
    # and through the CLI: that line, exit 2
    from harness.cli import main

    monkeypatch.setattr("sys.argv", ["harness", "datasets", "download", "nfc", "--url", url, "--sha256", "0" * 64,
                                     "--no-progress"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot download {url}: TooManyRedirects")


def test_a_part_left_from_other_bytes_is_fetched_again_whole_not_blamed_on_the_server(  # noqa: F811
        cache, server, nfcorpus_zip):
    """A .part left by an earlier, interrupted call (another mirror, an older copy of the zip) was resumed
    from this URL, and the mismatch was reported as this URL's: ``checksum mismatch for <url>: ... expected
    sha256:18ce... but got ...`` for a file that is right (a rerun then succeeded). Expected: fetched once
    more, whole, and unpacked; a mismatch of the file itself is still refused, after one request."""
    sha = hashlib.sha256(nfcorpus_zip).hexdigest()
    part = cache / "datasets" / ".downloads" / "nfc.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * 100_000)  # not the zip's first 100,000 bytes
    folder = dl.download("nfc", url=server.url("ok", "custom.zip"), sha256=sha, retries=0, backoff=0)
    assert server.log == [("ok", "custom.zip", "bytes=100000-"), ("ok", "custom.zip", None)]
    assert len(load_dataset(str(folder)).qrels) == 12334  # BEIR's NFCorpus test judgments
    assert not part.exists()
    # the file itself differs from the checksum: refused after one whole request (nothing kept to blame)
    server.log.clear()
    with pytest.raises(HarnessError, match="checksum mismatch"):
        dl.download("nfc2", url=server.url("ok", "custom.zip"), sha256="0" * 64, retries=0, backoff=0)
    assert server.log == [("ok", "custom.zip", None)]
