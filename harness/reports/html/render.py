"""The report as one self-contained HTML page: leaderboard, plots, efficiency and settings rendered
here as static HTML and inline SVG; the per-query explorer rendered in the browser (``report.js``)
from compact JSON embedded in the page. No network access is needed to view it."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from html import escape
from importlib import resources
from pathlib import Path
from string import Template

from harness.atomic import write_text
from harness.compare.analysis import TESTS
from harness.compare.table import valid_json_text, valid_text
from harness.reports.html import svg
from harness.reports.html.svg import text as _text
from harness.reports.html.model import DatasetSection, ForumsRow, Report


def _asset(name: str) -> str:
    return resources.files("harness.reports.html").joinpath(name).read_text(encoding="utf-8")


def _num(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(entry: dict | None, system: str) -> str:
    if entry is None:
        return f'<td class="cell missing" data-system="{escape(system)}">-</td>'
    classes = "cell best" if entry.get("best") else "cell"
    groups = entry.get("groups", "")
    return (f'<td class="{classes}" data-system="{escape(system)}" data-mean="{entry["mean"]!r}" '
            f'data-low="{entry["low"]!r}" data-high="{entry["high"]!r}" data-groups="{groups}">'
            f'<span class="mean">{entry["mean"]:.4f}</span>'
            + (f'<sup class="groups" title="not significantly different from systems sharing a letter">{groups}</sup>'
               if groups else "")
            + f'<span class="ci">{entry["low"]:.3f}–{entry["high"]:.3f}</span></td>')


def _row(section, metric: str, systems: list[str], css: str = "") -> str:
    cells = "".join(_cell(section.cells[metric].get(s), s) for s in systems)
    what = f"mean of {section.of} forums ({len(section.forums)} here), " if isinstance(section, ForumsRow) else ""
    return (f'<tr{css} data-dataset="{escape(section.label)}"><th>{_text(section.label)}'
            f'<small>{what}{section.n_queries:,} queries</small></th>{cells}</tr>')


def leaderboard(report: Report) -> str:
    out = []
    head = "".join(f"<th>{_text(s)}</th>" for s in report.systems)
    board_rows = report.rows or report.datasets
    by_label = {section.label: section for section in report.datasets}
    for metric in report.metrics:
        rows = [_row(section, metric, report.systems, ' class="forums-mean"' if isinstance(section, ForumsRow)
                     else "") for section in board_rows]
        if len(board_rows) + len(report.without_results) > 1:
            cells = "".join(_cell(report.average[metric].get(s), s) for s in report.systems)
            rows.append(f'<tr class="average" data-dataset="average"><th>average</th>{cells}</tr>')
        out.append(f'<div class="board-box"><h3>{_text(metric)}</h3><div class="scroll"><table class="board" '
                   f'data-metric="{escape(metric)}"><thead><tr><th>dataset</th>{head}</tr></thead>'
                   f'<tbody>{"".join(rows)}</tbody></table></div></div>')
        for group in report.forums.values():
            rows = [_row(by_label[label], metric, report.systems) for label in group.forums]
            rows.append(_row(group, metric, report.systems, ' class="average"'))
            out.append(f'<div class="board-box"><h3>{_text(group.title)} forums: {_text(metric)}</h3><div '
                       f'class="scroll"><table class="board forums" data-metric="{escape(metric)}" '
                       f'data-forums="{escape(group.label)}"><thead><tr><th>forum</th>{head}</tr></thead>'
                       f'<tbody>{"".join(rows)}</tbody></table></div></div>')
    out = ['<div class="boards">' + "".join(out) + "</div>"]
    s = report.settings
    test = TESTS[s.test]
    out.append(f'<p class="note">Mean over each dataset\'s queries with its {s.confidence:.0%} percentile bootstrap '
               f'interval ({s.resamples:,} resamplings of the queries, seed {s.seed}). <b>Bold</b>: best of the row. '
               f'Letters: systems sharing a letter are not significantly different ({test} on every pair of '
               f'systems, Holm-adjusted across the pairs, alpha = {s.alpha}). The average row is the unweighted '
               f'mean over datasets (systems with a value on every dataset); its interval resamples each '
               f'dataset\'s queries independently.'
               + "".join(f' {_text(g.label)} is one dataset of {g.of} forums, as BEIR reports it: its row is the '
                         f'unweighted mean of the forums\' means (systems with a value on all {g.of}; its interval '
                         f'resamples each forum\'s queries independently), counted once in the average; the forums '
                         f'table lists each.' for g in report.forums.values())
               + (f' No results for {", ".join(map(_text, report.without_results))} (every cell failed): the average '
                  f'row has no value, as in leaderboard.json.' if report.without_results else '')
               + (f' No results from {", ".join(map(_text, report.systems_without_results))} (every cell failed): '
                  f'- in every row, as in leaderboard.json.' if report.systems_without_results else '') + '</p>')
    out.append(versus_tables(report))
    return "".join(out)


def _versus_row(v: dict) -> str:
    direction = "up" if v["difference"] > 0 else "down" if v["difference"] < 0 else ""
    mark = (" ▲" if v["difference"] > 0 else " ▼") if v["significant"] else ""
    p = "&lt;0.0001" if v["p_holm"] < 1e-4 else f"{v['p_holm']:.4f}"
    return (f'<tr><td>{_text(v["system"])}</td><td>{_text(v["metric"])}</td>'
            f'<td class="num {direction}">{v["difference"]:+.4f}</td>'
            f'<td class="num">[{v["low"]:+.4f}, {v["high"]:+.4f}]</td><td class="num">{p}{mark}</td>'
            f'<td class="num">{v["wins"]}/{v["ties"]}/{v["losses"]}</td></tr>')


def versus_tables(report: Report) -> str:
    out = []
    pct = f"{report.settings.confidence:.0%}"
    for section in report.datasets:
        if not section.versus:
            continue
        rows = "".join(_versus_row(v) for v in section.versus)
        out.append(f'<details class="versus"><summary>{_text(section.label)}: every system against the baseline '
                   f'<b>{_text(section.baseline)}</b> (as <code>harness compare</code>)</summary>'
                   f'<table class="plain"><thead><tr><th>system</th><th>metric</th><th>Δ</th><th>{pct} CI '
                   f'(paired bootstrap)</th><th>p (Holm)</th><th>W/T/L</th></tr></thead><tbody>{rows}</tbody>'
                   f'</table></details>')
    return "".join(out)


def plots(report: Report) -> str:
    out = []
    for section in report.datasets:
        charts = []
        families = {m.split("@")[0] for m in report.metrics}
        for family, points in section.curves.items():
            if family not in families or len(points) < 2:
                continue
            ks = [k for k, _ in points]
            series = [(name, [means[name] for _, means in points]) for name in section.systems]
            label = svg.isolated(section.label)
            charts.append(svg.line_chart(f"{label}: {svg.isolated(family)}@k", ks, series, f"{family}@k (mean)"))
        for (system, metric), d in section.deltas.items():
            title = (f"{svg.isolated(section.label)}: {svg.isolated(metric)}, {svg.isolated(system)} − "
                     f"{svg.isolated(section.baseline)}")
            charts.append(svg.histogram(title, d))
        if charts:
            out.append(f'<h3>{_text(section.label)}</h3><div class="charts">{"".join(charts)}</div>')
    return "".join(out) or '<p class="note">No plots: one system and no metric at several cutoffs.</p>'


def _value(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return _text(str(value))  # text, and NaN / inf as such (NaN is no "<0.001")
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 1 or value == 0:
        return f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
    return f"{value:.3f}" if size >= 1e-3 else "<0.001"


def efficiency(report: Report) -> str:
    out = []
    for section in report.datasets:
        columns = list(dict.fromkeys(key for _, row in section.efficiency for key in row))
        if not columns:
            continue
        head = "".join(f"<th>{_text(c)}</th>" for c in columns)
        rows = "".join(f"<tr><td>{_text(name)}</td>"
                       + "".join(f'<td class="num">{_value(row[c]) if c in row else "-"}</td>' for c in columns)
                       + "</tr>" for name, row in section.efficiency)
        out.append(f'<h3>{_text(section.label)}</h3><div class="scroll"><table class="plain">'
                   f'<thead><tr><th>system</th>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
    note = ('<p class="note">Seconds per stage from each result\'s <code>timings</code> (queries/s = queries / '
            'search seconds) and every figure of its <code>efficiency</code> block when it has one. Timings are '
            'those of the machine and run that produced each result.</p>')
    return note + ("".join(out) or "<p>No result records timings.</p>")


def results_section(report: Report) -> str:
    out = []
    for r in report.results:
        rows = "".join(f"<tr><th>{_text(k)}</th><td><code>{_text(json.dumps(v, ensure_ascii=False))}</code></td></tr>"
                       for k, v in r.items() if k not in ("dataset", "system") and v not in (None, {}, []))
        out.append(f'<details><summary><b>{_text(r["system"])}</b> on {_text(r["dataset"])}'
                   f'{" — fingerprint " + _text(r["fingerprint"][:12]) if r.get("fingerprint") else ""}</summary>'
                   f'<table class="kv">{rows}</table></details>')
    return "".join(out)


def warnings(report: Report) -> str:
    items = [f"<li>{_text(w)}</li>" for w in report.warnings]
    items += [f"<li>{_text(s.label)}: {_text(w)}</li>" for s in report.datasets for w in s.warnings]
    return f'<ul class="warnings">{"".join(items)}</ul>' if items else ""


def _script_json(obj) -> str:
    """JSON safe inside <script>: '<' occurs only in strings, written as \\u003c (no '</script>', no '<!--');
    lone surrogates (strings that are not Unicode) as their \\uXXXX escapes."""
    return valid_json_text(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c"))


def explorer_payload(sections: list[DatasetSection]) -> dict:
    return {"datasets": [s.explorer for s in sections]}


def render(report: Report) -> str:
    n_queries = sum(s.n_queries for s in report.datasets)
    summary = (f"{len(report.datasets)} dataset(s), {len(report.systems)} system(s), {n_queries:,} queries; "
               f"baseline <b>{_text(report.baseline)}</b>; created "
               f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}")
    return Template(_asset("template.html")).substitute(
        title=_text(report.title), summary=summary, css=_asset("report.css"), warnings=warnings(report),
        leaderboard=leaderboard(report), plots=plots(report), efficiency=efficiency(report),
        results=results_section(report), data=_script_json(explorer_payload(report.datasets)),
        js=_asset("report.js"))


def write_report(report: Report, path: str | Path) -> Path:
    """Write the page atomically; returns its path. Text that is not Unicode (a lone surrogate: a folder
    name that is not UTF-8) is shown as U+FFFD."""
    path = Path(path)
    write_text(path, valid_text(render(report)))
    return path
