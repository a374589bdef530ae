"""Names isolated beside the page's text (harness/reports/html/svg.py ``isolated``, report.js ``iso``) stay
isolated when they hold isolate controls of their own.

A name was wrapped as FSI + name + PDI. A name holding a PDI that closes none of its own isolates
(``base`` U+2069 U+202E) closed that FSI itself: its override then ran on into the page's words, as the
fix of a name ending in U+202E meant to stop ('every system against the baseline' read right to left).
A name leaving an isolate open (``x`` U+2066) took the wrapper's PDI for it: the text after it was in the
name's isolate.

Oracle: Unicode's bidi algorithm, UAX #9 rules X2-X6a, for the explicit controls: an embedding or
override (U+202A-U+202E) opens a scope a PDF closes; an isolate initiator (U+2066-U+2068) one a PDI
closes, with every embedding and override opened inside it; a PDI matching no open isolate does
nothing. After an isolated name, no scope the name opened is open (the text after it is at the
paragraph's level), whatever the name holds; and, in Chromium, the words after such a name run left
to right.
"""

from __future__ import annotations

import pytest

from harness.reports.html.svg import isolated

RLO, LRI, FSI, PDI, PDF, RLE = "\u202e", "\u2066", "\u2068", "\u2069", "\u202c", "\u202b"


def open_scopes(text: str) -> list[str]:
    """The explicit scopes still open at the end of ``text`` (UAX #9 X2-X6a; overflow not modelled)."""
    stack: list[str] = []
    for c in text:
        if "\u202a" <= c <= "\u202e" and c != PDF:
            stack.append("embedding")
        elif c == PDF:
            if stack and stack[-1] == "embedding":
                stack.pop()
        elif c in "\u2066\u2067\u2068":
            stack.append("isolate")
        elif c == PDI and "isolate" in stack:
            while stack.pop() != "isolate":
                pass
    return stack


@pytest.mark.parametrize("name", [
    f"base{RLO}",  # (the case the first fix covered)
    f"base{PDI}{RLO}",  # a PDI of its own closed the wrapper: the override ran on
    f"x{PDI}{PDI}{RLE}y",
    f"x{LRI}",  # an isolate left open took the wrapper's PDI
    f"{LRI}{RLO}{LRI}",
    f"{PDI}{LRI}{PDI}{PDI}{RLO}",
    f"{RLO}a{PDF}",
])
def test_nothing_a_name_opens_runs_on_past_it(name):
    assert open_scopes(isolated(name) + ": every system") == []
    assert isolated(name).count(name) == 1  # (the name itself shown as it is)


def test_a_name_without_controls_is_unchanged():
    assert isolated("bm25 (k1=0.9)") == "bm25 (k1=0.9)"
    assert isolated(f"a{RLO}") == f"{FSI}a{RLO}{PDI}"  # (as before: one isolate around it)


def test_in_the_browser_the_words_after_such_a_name_run_left_to_right(tmp_path, chrome):
    """The page's static part (the baseline table's summary: Python) and the explorer (report.js): with
    system names and a dataset label ``name`` U+2069 U+202E, 'the baseline <b>base…</b> (as harness compare)'
    keeps the baseline left of 'harness compare', and the explorer's head '(baseline)' reads left to right."""
    import json

    from selenium.webdriver.common.by import By

    from harness.reports.html import build_report, load_results, write_report
    from tests.reports.browser import console_errors
    from tests.reports.test_report_explorer_s17 import _LEFT, BASE, FAST, OTHER
    from tests.compare.helpers import write_result

    arguments = []
    for name, values in (("base", BASE), ("other", OTHER)):
        folder = write_result(tmp_path / name, {q: {"MRR@10": v} for q, v in values.items()})
        doc = json.loads((folder / "metrics.json").read_text())
        doc["dataset"]["name"] = f"ds{PDI}{RLO}"
        (folder / "metrics.json").write_text(json.dumps(doc))
        arguments.append(f"{name}{PDI}{RLO}={folder}")
    page = write_report(build_report(load_results(arguments), ["MRR@10"], None, FAST), tmp_path / "r.html")
    chrome.get(page.as_uri())
    summary = chrome.find_element(By.CSS_SELECTOR, "details.versus summary")
    baseline, code = summary.find_element(By.TAG_NAME, "b"), summary.find_element(By.TAG_NAME, "code")
    assert baseline.rect["x"] < code.rect["x"]  # (the override ran on: code was left of the baseline)
    head = chrome.find_elements(By.CSS_SELECTOR, "#x-table thead th")[2]
    opened, closed = chrome.execute_script(_LEFT + """
        var node = arguments[0].firstChild, at = node.data.indexOf("(baseline)");
        return [left(node, at), left(node, at + 9)];""", head)
    assert opened < closed
    assert console_errors(chrome) == []
