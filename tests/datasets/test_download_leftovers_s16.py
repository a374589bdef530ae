"""Download leftovers (session 16).

A zip sent without a length (no Content-Length, not chunked: the body ends when the server closes the
connection, as HTTP/1.0 servers send it) can be cut short unseen. The download then fetched half the zip,
and its checksum mismatch blamed the file: `checksum mismatch for URL`. It is now fetched once more, whole,
before a mismatch is reported; a body cut every time is still a mismatch, after exactly two requests.
A file that matches its checksum but is no dataset zip is not kept in .downloads/."""

from __future__ import annotations

import pytest

from harness.datasets import download as dl
from harness.errors import HarnessError
from tests.datasets.test_download import cache, nfcorpus_zip, registry_md5, server  # noqa: F401 (fixtures)


def test_a_body_without_a_length_cut_once_is_fetched_again_whole(cache, server, registry_md5):
    folder = dl.download("nfcorpus", mirror=server.base + "/nolength", backoff=0)
    assert (folder / "corpus.jsonl").is_file()
    assert [entry[0] for entry in server.log] == ["nolength"] * 2  # half (unseen), then the whole zip


def test_a_body_without_a_length_cut_every_time_is_a_mismatch_after_two_requests(cache, server, registry_md5):
    with pytest.raises(HarnessError, match=r"^checksum mismatch for http://127\.0\.0\.1:\d+/nolengthcut/nfcorpus\.zip"):
        dl.download("nfcorpus", mirror=server.base + "/nolengthcut", backoff=0)
    assert [entry[0] for entry in server.log] == ["nolengthcut"] * 2
    assert not (cache / "datasets" / "nfcorpus").exists()


def test_a_file_that_matches_its_checksum_but_is_no_dataset_zip_is_not_kept(cache, tmp_path):
    # `download mine --url U --sha256 S` of a file that is no zip: it stayed in .downloads/ (every retry then
    # reused it, matching its checksum, and failed the same way); it is removed, and the line says why
    import hashlib

    from tests.datasets.http_fixture import FlakyServer

    data = b"<html>not a zip</html>\n" * 100
    sha = hashlib.sha256(data).hexdigest()
    with FlakyServer({"mine.zip": data}) as srv:
        with pytest.raises(HarnessError) as err:
            dl.download("mine", url=srv.url("ok", "mine.zip"), sha256=sha, backoff=0)
    zip_path = cache / "datasets" / ".downloads" / "mine.zip"
    assert str(err.value) == (f"{zip_path}: not a valid zip file (File is not a zip file) (the file has the sha256 "
                              "expected: the URL and checksum name a file that is no BEIR dataset zip; it was removed)")
    assert not zip_path.exists() and not (cache / "datasets" / "mine").exists()
