"""A config saved with a UTF-8 byte-order mark (Windows Notepad's "UTF-8 with BOM"). tomllib refused it:
``q.toml: invalid TOML: Invalid statement (at line 1, column 1)``. The mark (U+FEFF, bytes EF BB BF) is
no part of the TOML: the config reads as the same file without it, and a config error names the line
counted in the text without it (the mark adds no line)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.bench import load_config
from harness.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
BOM = b"\xef\xbb\xbf"


def test_a_config_with_a_byte_order_mark_reads_as_without(tmp_path):
    plain = tmp_path / "quickstart.toml"
    shutil.copyfile(REPO / "configs" / "quickstart.toml", plain)
    marked = tmp_path / "marked.toml"
    marked.write_bytes(BOM + plain.read_bytes())
    expected, got = load_config(plain), load_config(marked)
    assert got.name == expected.name == "quickstart"
    assert got.retrievers == expected.retrievers and got.datasets == expected.datasets


def test_a_config_error_after_a_byte_order_mark_names_its_line(tmp_path):
    path = tmp_path / "b.toml"
    # line 1: name; line 2: datasets; line 4: [[retrievers]]; line 6: k = 0 (counted by hand)
    path.write_bytes(BOM + b'name = "b"\ndatasets = ["scifact"]\n\n[[retrievers]]\ntype = "bm25"\nk = 0\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:6: retrievers[0].k: unknown key (expected one of: label, params, type)"
    path.write_bytes(BOM + b'name = 5\ndatasets = ["scifact"]\n\n[[retrievers]]\ntype = "bm25"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:1: name: "), str(info.value)
