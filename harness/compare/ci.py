"""A check's verdicts in the formats CI systems read: a GitHub job-summary table and JUnit XML.

* :func:`github_summary`: Markdown appended to the file named by ``$GITHUB_STEP_SUMMARY`` (GitHub
  Actions renders it on the run's summary page): a headline (PASSED / FAILED), then one row per
  metric with its verdict, means, change, p-value and queries better / same / worse.
* :func:`junit_xml`: one ``<testsuite name="harness check">`` with one ``<testcase>`` per metric
  (classname ``harness.check``, name the metric); a REGRESSED metric carries a ``<failure>``, every
  case a ``<system-out>`` with its report line. Jenkins, GitLab, Azure Pipelines and CircleCI read it.

With the latency gate (``--latency-tolerance``) the summary gains a second table (stage, verdict,
baseline, current, ratio, interval) and the JUnit suite one case per stage (classname
``harness.check.latency``, name ``STAGE STATISTIC``; a REGRESSED stage carries a ``<failure>``), or
one ``<skipped>`` case named ``latency`` when there is no latency data.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from harness.compare.check import REGRESSED, CheckResult
from harness.compare.significance import percent

_MARK = {"OK": "✅ OK", "IMPROVED": "🟢 IMPROVED", "NOISE": "⚪ NOISE", "REGRESSED": "❌ REGRESSED",
         "SLOWER": "⚪ SLOWER", "FASTER": "⚪ FASTER"}


# Characters XML 1.0 does not allow (C0 controls but tab, LF and CR; lone surrogates; U+FFFE, U+FFFF):
# ElementTree writes them as they are, and a reader then refuses the whole file as not well-formed.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(xml: str) -> str:
    """``xml`` with each character XML 1.0 refuses (e.g. a query id holding U+0001) written as a
    visible escape (``\\x01``, ``\\ud800``), so that the JUnit file stays well-formed."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", xml)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _settings(result: CheckResult) -> str:
    test = "randomization test" if result.test == "randomization" else "paired t-test"
    return f"{result.n_queries} queries, {result.settings()}, {test}"


def headline(result: CheckResult) -> str:
    if result.regressed:
        return "FAILED: regression on " + ", ".join(result.failures)
    return "PASSED"


def github_summary(result: CheckResult, baseline: str, current: str) -> str:
    """The verdict table as GitHub-flavoured Markdown (ends with a blank line, so summaries can stack)."""
    lines = [f"### harness check: {'❌ ' if result.regressed else '✅ '}{headline(result)}", "",
             f"`{_cell(current)}` against baseline `{_cell(baseline)}` ({_settings(result)})", "",
             "| metric | verdict | baseline | current | change | p | better / same / worse |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for c in result.checks:
        lines.append(f"| {_cell(c.metric)} | {_MARK.get(c.verdict, c.verdict)} | {c.baseline_mean:.4f} | "
                     f"{c.current_mean:.4f} | {c.delta:+.4f} | {c.p_value:.4g} | {c.wins} / {c.ties} / {c.losses} |")
    lines.extend(f"\n> warning: {_cell(w)}" for w in result.warnings)
    lines.extend(_latency_summary(result.latency))
    return "\n".join(lines) + "\n\n"


def _latency_summary(latency) -> list[str]:
    """The latency verdicts (``--latency-tolerance``) as a second table (nothing without them)."""
    if latency is None:
        return []
    if latency.no_data:
        return ["", f"**latency**: {_cell(latency.no_data)}"]
    lines = ["", f"**latency** ({latency.statistic}, tolerance {latency.tolerance:g}, "
                 f"{percent(latency.confidence)} bootstrap interval of the ratio)", "",
             "| stage | verdict | baseline | current | ratio | interval |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for c in latency.checks:
        interval = f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" if c.ci_low is not None else "-"
        lines.append(f"| {c.stage} ({c.statistic}) | {_MARK.get(c.verdict, c.verdict)} | {c.baseline:.4g} {c.unit} | "
                     f"{c.current:.4g} {c.unit} | x{c.ratio:.3f} | {interval} |")
    lines.extend(f"\n> warning: {_cell(w)}" for w in latency.warnings)
    return lines


def junit_xml(result: CheckResult, baseline: str, current: str) -> str:
    """JUnit XML: one test case per metric, a failure per REGRESSED metric."""
    failures = len(result.failures)
    latency = result.latency
    cases = len(result.checks) + (0 if latency is None else len(latency.checks) or 1)
    skipped = int(latency is not None and not latency.checks)
    suite = ET.Element("testsuite", name="harness check", tests=str(cases), failures=str(failures),
                       errors="0", skipped=str(skipped))
    properties = ET.SubElement(suite, "properties")
    for name, value in (("baseline", baseline), ("current", current), ("n_queries", result.n_queries),
                        ("tolerance", result.tolerance), *((f"tolerance {m}", t) for m, t in result.tolerances.items()),
                        ("alpha", result.alpha), ("test", result.test)):
        ET.SubElement(properties, "property", name=name, value=str(value))
    for c in result.checks:
        case = ET.SubElement(suite, "testcase", classname="harness.check", name=c.metric)
        line = (f"{c.verdict} {c.metric}: {c.baseline_mean:.4f} -> {c.current_mean:.4f} ({c.delta:+.4f}, "
                f"p = {c.p_value:.4g}; {c.wins} better, {c.ties} same, {c.losses} worse)")
        if c.verdict == REGRESSED:
            failure = ET.SubElement(case, "failure", message=line, type=REGRESSED)
            failure.text = "\n".join(f"{q.query_id}: {q.baseline:.4f} -> {q.current:.4f}" for q in c.worst) or line
        ET.SubElement(case, "system-out").text = line
    if latency is not None:
        _latency_cases(suite, latency)
    root = ET.Element("testsuites", name="retrieval-harness", tests=suite.get("tests"), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _xml_text(ET.tostring(root, encoding="unicode")) + "\n"


def _latency_cases(suite: ET.Element, latency) -> None:
    """One test case per latency stage (classname ``harness.check.latency``), or one skipped case without data."""
    if not latency.checks:
        case = ET.SubElement(suite, "testcase", classname="harness.check.latency", name="latency")
        ET.SubElement(case, "skipped", message=latency.no_data or "no latency checked")
        return
    for c in latency.checks:
        case = ET.SubElement(suite, "testcase", classname="harness.check.latency", name=f"{c.stage} {c.statistic}")
        line = f"{c.verdict} {c.line()}"
        if c.verdict == REGRESSED:
            ET.SubElement(case, "failure", message=line, type=REGRESSED).text = line
        ET.SubElement(case, "system-out").text = line
