"""Without faiss-cpu, index='faiss' names the extra to install, as the other optional features do
(postgres: ``pip install 'retrieval-harness[postgres]'``, irds, ray, plots). Expected message from
pyproject.toml's ``[project.optional-dependencies] faiss = ["faiss-cpu>=1.7"]``."""

import builtins

import pytest

from harness.errors import HarnessError
from retrievers.dense import faiss_index


def test_missing_faiss_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(HarnessError) as caught:
        faiss_index._faiss()
    message = str(caught.value)
    assert "pip install 'retrieval-harness[faiss]'" in message
    assert "\n" not in message
