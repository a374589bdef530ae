"""Markdown for a comparison: systems x metrics (best in bold, significance marks), then the details.

Main table: one row per system, one column per metric, the mean over the compared queries at 4
decimals; the best value of each column is bold (every system that reaches it, up to the rounding of
the sums: :func:`~harness.compare.analysis.same_mean`). A system
significantly better than the baseline (Holm-adjusted p of the chosen test < alpha) is marked
``▲``, significantly worse ``▼``. The details table gives, for every system and metric, the mean
difference with its bootstrap interval, the raw and adjusted p-values of both tests, and the
number of queries won, tied and lost against the baseline. A count (``num_ret``, ``num_rel``) or
``Judged@k`` (:mod:`harness.compare.measures`) has its means only. When the results carry efficiency
blocks, efficiency columns follow the metrics in the main table (:func:`efficiency_columns`).
"""

from __future__ import annotations

import re

from harness.compare.analysis import TESTS, Comparison
from harness.compare.measures import count
from harness.compare.significance import percent
from harness.fingerprint import describe_hardware
from harness.reports import efficiency


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD, so that it can be written as UTF-8: a folder name
    that is not UTF-8 (Python decodes its bytes as surrogates: ``caf\\xe9`` is ``'caf\\udce9'``), or a
    ``\\ud800`` escape in a JSON file, would otherwise fail the whole output."""
    return _SURROGATE.sub("\ufffd", text)


def valid_json_text(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with each lone surrogate as its ``\\uXXXX`` escape: valid
    UTF-8, and it reads back as the same string."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _p(value: float) -> str:
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def _name(text: str) -> str:
    """A system name as one Markdown table cell: ``|`` escaped, line breaks as spaces."""
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def comparison_table(comparison: Comparison) -> str:
    c = comparison
    speed, _ = efficiency_columns(c.aligned.systems)
    extra = list(EFFICIENCY_COLUMNS) if speed else []
    lines = ["| system | " + " | ".join([*c.metrics, *extra]) + " |",
             "| --- | " + " | ".join(["---:" for _ in c.metrics] + ["---:"] * len(extra)) + " |"]
    best = {m: c.best(m) for m in c.metrics}
    for system in c.systems:
        cells = []
        for metric in c.metrics:
            text = f"{c.means[system][metric]:.4f}"
            if system in best[metric]:
                text = f"**{text}**"
            cell = c.cells.get((system, metric))
            if cell is not None and cell.significant:
                text += " ▲" if cell.stats.difference > 0 else " ▼"
            cells.append(text)
        label = f"{_name(system)} (baseline)" if system == c.baseline else _name(system)
        lines.append(f"| {label} | " + " | ".join(cells + speed.get(system, [])) + " |")
    return "\n".join(lines) + "\n"


def details_table(comparison: Comparison) -> str:
    c = comparison
    pct = percent(c.settings.confidence)
    lines = [f"| system | metric | Δ vs baseline | {pct} CI | p (t) | p (rand.) | p Holm (t) | p Holm (rand.) | W/T/L |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (system, metric), cell in c.cells.items():
        s = cell.stats
        lines.append(f"| {_name(system)} | {metric} | {_signed(s.difference)} "
                     f"| [{_signed(s.ci_low)}, {_signed(s.ci_high)}] "
                     f"| {_p(s.p_t)} | {_p(s.p_randomization)} | {_p(cell.p_t_holm)} | {_p(cell.p_randomization_holm)} "
                     f"| {s.wins}/{s.ties}/{s.losses} |")
    return "\n".join(lines) + "\n"


EFFICIENCY_COLUMNS = ("search q/s", "p95 ms", "index MB", "peak RSS MB", "hardware")


def efficiency_columns(systems) -> tuple[dict[str, list[str]], list[str]]:
    """Efficiency cells beside the metrics: ``{system: [search q/s, p95 ms, index MB, peak RSS MB,
    hardware letter]}`` and the lines under the table (latency basis, hardware legend, a warning when
    the hardware differs); empty when no system has an efficiency block."""
    blocks = {s.name: s.document.efficiency for s in systems if s.document is not None}
    if not any(blocks.values()):
        return {}, []
    rows = {s.name: efficiency.summary(blocks.get(s.name)) for s in systems}
    labels, legend = efficiency.hardware_labels([row["hardware"] for row in rows.values()])
    cells = {name: [efficiency.fmt(row["queries_per_s"]), efficiency.fmt(row["p95_ms"], 3),
                    efficiency.fmt(row["index_mb"]), efficiency.fmt(row["peak_rss_mb"]), label]
             for (name, row), label in zip(rows.items(), labels)}
    bases = sorted({row["basis"] for row in rows.values() if row["basis"]})
    notes = [f"Efficiency (docs/efficiency.md): search q/s and p95 latency of the search stage "
             f"({' / '.join(bases) or 'basis unknown'}); index size on disk; peak RSS of the process; hardware:"
             + "".join(f" **{letter}** = {describe_hardware(hw)};" for letter, hw in legend.items())]
    if len(bases) > 1:  # (a request's time, queueing included, beside a share of a timed batch: x100 apart)
        notes.append("> warning: p95 latencies on different bases are different quantities, not comparable: "
                     + "; ".join(f"{name}: {row['basis']}" for name, row in rows.items() if row["basis"]) + ".")
    for s in systems:  # (a failed request has no latency: its figures are those of the answered queries)
        failed = rows[s.name]["failed"]
        if failed:
            answered = len(efficiency.query_latencies(s.document))
            notes.append(f"> warning: {s.name}: {failed:,} requests failed (retriever_stats.failures); its latencies "
                         f"are those of the {answered:,} queries answered, without the failed ones.")
    if len(legend) > 1:
        notes.append("> warning: these timings were measured on different hardware and are not comparable.")
    return cells, notes


def comparison_markdown(comparison: Comparison, title: str | None = "Comparison") -> str:
    c = comparison
    s = c.settings
    n = len(c.aligned.query_ids)
    sections = [f"## {title}"] if title else []
    sections.append(comparison_table(c).rstrip())
    sections.append(f"{n} queries. Best value per metric in bold. ▲ / ▼: significantly better / worse than "
                    f"**{c.baseline}** ({TESTS[s.test]}, Holm-Bonferroni adjusted across {len(c.systems) - 1} "
                    f"system(s), alpha = {s.alpha}).")
    counts = [m for m in c.metrics if count(m)]
    if counts:
        sections.append("Not quality measures (counts, coverage: more is not better): no best value and no significance test: "
                        + "; ".join(f"{m}, {count(m)}" for m in counts) + " (docs/compare.md).")
    sections.extend(efficiency_columns(c.aligned.systems)[1])
    if c.cells:
        rand = (f"{s.permutations:,} seeded sign permutations (seed {s.seed}), or every sign flip of the m "
                "queries that changed where 2^m is at most that")
        sections.append(details_table(c).rstrip())
        sections.append(f"Δ: mean per-query difference (system - baseline); CI: paired bootstrap, "
                        f"{s.resamples:,} resamples (seed {s.seed}); randomization test: {rand}; "
                        "W/T/L: queries won / tied / lost.")
    sections.extend(f"> warning: {w}" for w in [*c.aligned.warnings, *c.warnings])
    return "\n\n".join(sections) + "\n"
