"""harness compare's Markdown tables: one cell per column whatever the system names hold."""

from __future__ import annotations

from harness.compare import Settings, align, compare, load_system
from harness.compare.table import comparison_markdown
from tests.compare.helpers import values, write_result


def _row_cells(line: str) -> list[str]:
    """The cells of a GitHub-flavoured Markdown table row (``\\|`` is a literal bar inside a cell)."""
    cells, current, i = [], "", 1
    while i < len(line) - 1:
        if line[i] == "\\" and line[i + 1] == "|":
            current, i = current + "|", i + 2
            continue
        if line[i] == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += line[i]
        i += 1
    return cells + [current.strip()]


def test_bar_in_a_system_name_stays_in_its_cell(tmp_path):
    """``NAME=PATH`` lets a name hold '|'; unescaped it split the name's cell in two and shifted every
    value one column right (NDCG@10 showed "y (baseline)"). Expected: the row has as many cells as
    the header, the name reads back as given, and the means sit under their metric."""
    a = write_result(tmp_path / "a", values("NDCG@10", [0.5, 1.0, 0.0, 0.25]))
    b = write_result(tmp_path / "b", values("NDCG@10", [0.5, 1.0, 0.5, 0.25]))
    systems = [load_system(f"x|y={a}"), load_system(f"new\nline={b}")]
    markdown = comparison_markdown(compare(align(systems, ["NDCG@10"]), None, Settings(permutations=100,
                                                                                      resamples=100)))
    tables = [line for line in markdown.splitlines() if line.startswith("|")]
    header, rows = _row_cells(tables[0]), [_row_cells(line) for line in tables[2:4]]
    assert header == ["system", "NDCG@10"]
    assert rows == [["x|y (baseline)", "0.4375"], ["new line", "**0.5625**"]]
    details = _row_cells(tables[-1])
    assert details[:3] == ["new line", "NDCG@10", "+0.1250"] and len(details) == len(_row_cells(tables[-3])) == 9
