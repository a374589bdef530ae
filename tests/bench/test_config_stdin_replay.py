"""A bench config in which two ``run-file`` entries replay standard input (``path = "-"``) is refused
when it is read, before anything runs (harness/bench/config.py ``_one_stdin_replay``): standard input
can be read once, and the second entry's cell failed with ``<stdin>: the run file is empty`` (a cell
of a correct run reported as a broken file). One entry replaying it is a config like any other."""

from __future__ import annotations

import pytest

from harness.bench.config import parse_config
from harness.errors import ConfigError


def _config(*entries, pipelines=()):
    data = {"name": "b", "datasets": ["scifact"], "retrievers": list(entries)}
    if pipelines:
        data["pipelines"] = list(pipelines)
    return data


def test_two_entries_replaying_stdin_are_refused():
    replay = {"type": "run-file", "label": "a", "params": {"path": "-"}}
    with pytest.raises(ConfigError) as info:
        parse_config(_config(replay, {**replay, "label": "b"}), source="b.toml")
    assert str(info.value) == ('b.toml: retrievers[1].params.path: "-" (standard input) is replayed by '
                               "retrievers[0].params.path too: standard input can be read once; give the other "
                               "as a file")
    pipeline = {"label": "p", "stages": [{"name": "s", "type": "retrieve", "retriever": "run-file",
                                          "params": {"path": "-"}}]}
    with pytest.raises(ConfigError, match=r"pipelines\[0\]\.stages\[0\]\.params\.path: .* retrievers\[0\]"):
        parse_config(_config(replay, pipelines=[pipeline]), source="b.toml")
    assert len(parse_config(_config(replay, {**replay, "label": "b", "params": {"path": "run.trec"}})).retrievers) == 2
