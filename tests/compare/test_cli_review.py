"""harness compare's files when a system's name is not Unicode (found by a review of the outputs)."""

from __future__ import annotations

import json
import os

from tests.compare.helpers import write_result


def test_a_folder_name_that_is_not_utf8_is_written_to_markdown_and_json(tmp_path, harness_cli):
    """A result folder named with a Latin-1 byte: Python decodes it as 'caf\\udce9'. --markdown and
    --json failed after the table was printed ("'utf-8' codec can't encode character '\\udce9'", exit 2,
    neither file written). The Markdown shows U+FFFD (as the terminal); the JSON keeps the escape
    \\udce9, which reads back as the same name and the same path."""
    name = os.fsdecode(b"caf\xe9")
    a = write_result(tmp_path / "a", {f"q{i}": {"M@10": v} for i, v in enumerate((0.1, 0.5, 0.9))})
    b = write_result(tmp_path / name, {f"q{i}": {"M@10": v} for i, v in enumerate((0.2, 0.4, 0.7))})
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    proc = harness_cli("compare", a, b, "-m", "M@10", "--permutations", "10", "--resamples", "10",
                       "--markdown", md, "--json", js)
    assert proc.returncode == 0, proc.stderr
    assert "| caf\ufffd | 0.4333 |" in md.read_text(encoding="utf-8")
    systems = json.loads(js.read_text(encoding="utf-8"))["systems"]
    assert [s["name"] for s in systems] == ["a", name]
    assert os.path.isfile(systems[1]["source"])
