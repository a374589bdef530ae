"""A zip sent without a length (no Content-Length, not chunked: the body ends when the server closes the
connection, as HTTP/1.0 servers send it) can be cut short unseen. The download then fetched half the zip,
and its checksum mismatch blamed the file: `checksum mismatch for URL`. It is now fetched once more, whole,
before a mismatch is reported; a body cut every time is still a mismatch, after exactly two requests."""

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
