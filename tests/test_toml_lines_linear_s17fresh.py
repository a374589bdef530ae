"""The line scan of harness/toml_lines.py reads the text a bounded number of times, not once per key.

Each key's line was ``text.count("\\n", 0, i)``: from the start of the file for every key, quadratic in
the file's size. A generated bench config of 20,000 ``[[retrievers]]`` tables (1.5 MB, under the 16 MiB
a config error still scans) took 59 s to print its error line (2,000 tables: 0.77 s). Checked without
timings: the characters the scanner's newline counts cover, summed, against the text's length; and the
line found, counted by hand from the generated text (1 line of ``name``, then 4 lines per table: the
last table's ``label`` is on line 1 + 4 * (n - 1) + 3).
"""

from __future__ import annotations

from harness import toml_lines


class CountingText(str):
    """A text that sums the spans its ``count`` calls cover."""

    spanned = 0

    def count(self, sub, start=None, end=None):  # noqa: A003 - str's own name
        start = 0 if start is None else start
        end = len(self) if end is None else min(end, len(self))
        CountingText.spanned += max(0, end - start)
        return super().count(sub, start, end)


def config(n: int) -> str:
    return 'name = "b"\n' + "".join(f'[[retrievers]]\ntype = "bm25"\nlabel = "r{i}"\nparams = {{ k1 = 0.9, b = 0.4 }}\n'
                                    for i in range(n))


def test_lines_are_counted_in_one_pass(monkeypatch):
    n = 2000
    text = CountingText(config(n))
    CountingText.spanned = 0
    lines = toml_lines._Scanner(text).scan()
    assert lines[f"retrievers[{n - 1}].label"] == 1 + 4 * (n - 1) + 3
    assert lines["retrievers[0].params.b"] == 5 and lines["name"] == 1
    assert CountingText.spanned <= 2 * len(text)  # was ~ 6e8: the text's 150,901 characters once per key


def test_line_of_the_last_table_of_a_large_config():
    n = 20000
    assert toml_lines.line_of(config(n), f"retrievers[{n - 1}].params.k1") == 1 + 4 * (n - 1) + 4
