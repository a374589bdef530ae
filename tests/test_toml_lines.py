"""Lines of key paths in TOML files (harness/toml_lines.py), and config errors naming them.

A config error named the file and the key path only (``b.toml: pipelines[0].stages[1].depth: ...``);
in a config of several pipelines a user counted ``[[pipelines.stages]]`` headers to find it. It is now
``b.toml:27: pipelines[0].stages[1].depth: ...`` as compilers write it. The expected lines below are
counted by hand in each text.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.toml_lines import key_lines, line_of

REPO = Path(__file__).resolve().parents[1]

TEXT = '''name = "b"   # a comment [not a table]
k = [10,
     100]
"quoted key" = 'x = [y]'
notes = """a string
[[retrievers]]
type = "not a key"
"""
datasets = [
  {path = "scifact", label = "sf"},  # first
  {path = "nope", label = "x"},
]
dotted.key = 1

[[retrievers]]
type = "bm25"
params = { k1 = 0.9, b = 0.4 }

[[pipelines]]
label = "p"
[[pipelines.stages]]
name = "s1"
[[pipelines.stages]]
name = "s2"
depth = 100
[[pipelines]]
label = "q"
[[pipelines.stages]]
name = "t1"
[executor]
kind = "ray"
'''


def test_lines_counted_by_hand():
    lines = key_lines(TEXT)
    expected = {"name": 1, "retrievers": 15, "pipelines": 19, "pipelines[0].stages": 21, "k": 2, "k[0]": 2, "k[1]": 3, "quoted key": 4, "notes": 5, "datasets": 9,
                "datasets[0]": 10, "datasets[0].label": 10, "datasets[1]": 11, "datasets[1].path": 11,
                "dotted": 13, "dotted.key": 13, "retrievers[0]": 15, "retrievers[0].type": 16,
                "retrievers[0].params.b": 17, "pipelines[0]": 19, "pipelines[0].label": 20,
                "pipelines[0].stages[0]": 21, "pipelines[0].stages[0].name": 22, "pipelines[0].stages[1]": 23,
                "pipelines[0].stages[1].depth": 25, "pipelines[1]": 26, "pipelines[1].stages[0].name": 29,
                "executor": 30, "executor.kind": 31}
    assert {path: lines.get(path) for path in expected} == expected
    assert "retrievers[1]" not in lines and "type" not in lines  # (inside the multi-line string: no keys)


def test_a_path_not_written_is_found_at_its_table():
    assert line_of(TEXT, "pipelines[0].stages[1].reranker") == 23  # a missing key: its table's header
    assert line_of(TEXT, "retrievers[0].params.k3") == 17
    assert line_of(TEXT, "metrics") is None
    assert line_of("not = [toml", "not") == 1 and line_of("", "x") is None


@pytest.mark.parametrize("path", sorted(
    [*REPO.glob("configs/*.toml"), *REPO.glob("examples/**/*.toml")], key=str), ids=lambda p: p.name)
def test_every_key_of_the_shipped_configs_is_found_on_a_line_naming_it(path):
    """Checked against tomllib: each key path its data holds is found, on a line that names the key."""
    text = path.read_text()
    lines, rows = key_lines(text), text.splitlines()

    def walk(value, prefix):
        if isinstance(value, dict):
            for key, item in value.items():
                inner = f"{prefix}.{key}" if prefix else key
                yield inner, key
                yield from walk(item, inner)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from walk(item, f"{prefix}[{i}]")

    paths = list(walk(tomllib.loads(text), ""))
    assert paths
    for key_path, key in paths:
        assert key_path in lines, key_path
        assert key in rows[lines[key_path] - 1], (key_path, lines[key_path])


def test_a_config_error_names_the_line(tmp_path):
    from harness.bench import load_config

    path = tmp_path / "b.toml"
    path.write_text('name = "b"\ndatasets = ["scifact"]\n\n[[retrievers]]\ntype = "bm25"\n\n[[pipelines]]\n'
                    'label = "p"\n[[pipelines.stages]]\nname = "s1"\ntype = "retrieve"\nretriever = "bm25"\n'
                    '[[pipelines.stages]]\nname = "s2"\ntype = "rerank"\ninput = "s1"\nreranker = "cross-encoder"\n'
                    'depth = 0\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:18: pipelines[0].stages[1].depth: expected an integer from 1 to 2^63 - 1, got 0"
    assert ConfigError("<pipeline>", "stages[0]", "x").line is None  # not a file: no line
    assert str(ConfigError(str(path), "", "invalid TOML")) == f"{path}: invalid TOML"
