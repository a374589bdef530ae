"""A model name that goes to the Hugging Face hub and fails is one line, whatever huggingface_hub's message holds.

Its messages span lines ("Got: ConnectError: ...\\nAn error happened while trying to locate the files on the
Hub ..."): `harness rerank -p model=nope` printed two lines.
"""

from __future__ import annotations

import huggingface_hub
import pytest

from harness.errors import HarnessError
from retrievers.dense.model import ModelHandle
from retrievers.rerank.cross_encoder import CrossEncoderReranker


class LocalEntryNotFoundError(Exception):
    pass


def _fail(*args, **kwargs):
    raise LocalEntryNotFoundError("Got: ConnectError: [Errno -2] Name or service not known\nAn error happened "
                                  "while trying to locate the files on the Hub.")


EXPECTED = ("(not a folder; hub download failed: LocalEntryNotFoundError: Got: ConnectError: [Errno -2] Name or "
            "service not known An error happened while trying to locate the files on the Hub.)")


def test_dense_model(monkeypatch):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fail)
    with pytest.raises(HarnessError) as err:
        ModelHandle.resolve("nope_rel_s34")
    assert str(err.value) == f"cannot get model 'nope_rel_s34' {EXPECTED}"


def test_cross_encoder(monkeypatch):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fail)
    with pytest.raises(ValueError) as err:
        CrossEncoderReranker("nope_rel_s34").folder()
    assert str(err.value) == f"cannot get cross-encoder 'nope_rel_s34' {EXPECTED}"
