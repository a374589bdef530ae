"""Small hand-written SVG charts for the HTML report (no plotting library needed).

* :func:`line_chart` -- metric@k against k (log-spaced x), one line per system, a legend.
* :func:`histogram` -- per-query differences against the baseline: ties counted apart, the other
  differences in 20 bins over a symmetric range (losses red, gains green).

Every mark carries a ``<title>`` (the browser shows it as a tooltip) with its exact value.
"""

from __future__ import annotations

import math
import re
from html import escape

import numpy as np

from harness.evaluation.evaluator import finite_mean

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
WIDTH, HEIGHT = 380, 250
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 28, 40


BIDI_SCOPES = re.compile("[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides, isolates and their ends


def isolated(value) -> str:
    """``value``, isolated (U+2068 ... U+2069) when it holds an explicit bidi embedding, override or isolate,
    whose scope would otherwise run on into the text after it (a dataset label ending in U+202E RIGHT-TO-LEFT
    OVERRIDE drew ': every system against the baseline' right to left); the isolate ends it there (Unicode's
    bidi algorithm, UAX #9: a PDI closes every embedding and override opened after its isolate). Other text
    is unchanged. Isolates the value leaves open are closed (a PDI each), and a PDI of its own that closes
    none of its isolates gets an FSI of its own in front (it closed the one around it: ``x`` U+2069 U+202E
    ran its override on into the page's text as before)."""
    value = str(value)
    if not BIDI_SCOPES.search(value):
        return value
    opened = stray = 0
    for c in value:
        if c in "\u2066\u2067\u2068":
            opened += 1
        elif c == "\u2069":
            opened, stray = (opened - 1, stray) if opened else (opened, stray + 1)
    return "\u2068" * (1 + stray) + value + "\u2069" * (opened + 1)


def text(value) -> str:
    """``value`` as the text of an element (HTML or SVG): :func:`isolated`, escaped."""
    return escape(isolated(value))


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _scale(values) -> float:
    """1.0, or for values past 2^500 in magnitude (DCG_exp of large grades, up to 2^1023) the power of two
    that brings the largest below 1: the chart is laid out on ``value * scale`` (exact), so that paddings,
    spans and bin widths stay finite, and labelled with the values themselves."""
    top = max((abs(float(v)) for v in values), default=0.0)
    return 2.0 ** -math.frexp(top)[1] if top > 2.0**500 else 1.0


def _ticks(low: float, high: float, count: int = 5, integer: bool = False) -> tuple[list[float], int]:
    """Round tick values between ``low`` and ``high`` (at most about ``count``) and their decimals."""
    span = high - low
    if span <= 0:
        return [low], 2
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 2.5, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    if integer:
        step = max(1.0, round(step))
    decimals = next(d for d in range(0, 12) if abs(step * 10 ** d - round(step * 10 ** d)) < 1e-6)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)], decimals


def _frame(title: str, body: list[str], height: int = HEIGHT) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
            f'height="{height}" role="img" aria-label="{escape(title)}" class="chart">'
            f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" class="chart-title">{text(title)}</text>'
            + "".join(body) + "</svg>")


def _y_axis(low: float, high: float, y, integer: bool = False, scale: float = 1.0) -> list[str]:
    out = []
    ticks, digits = _ticks(low, high, integer=integer)
    for t in ticks:
        label = f"{t:.{digits}f}" if scale == 1.0 else f"{t / scale:.3g}"
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" class="grid"/>'
                   f'<text x="{LEFT - 4}" y="{y(t) + 3:.1f}" text-anchor="end" class="tick">{label}</text>')
    return out


def line_chart(title: str, ks: list[int], series: list[tuple[str, list[float]]], ylabel: str) -> str:
    """Lines of ``series`` ((name, one value per k)) over log-spaced ``ks``; the legend below."""
    legend_rows = math.ceil(len(series) / 2)
    height = HEIGHT + 16 * legend_rows
    plot_bottom = HEIGHT - BOTTOM
    scale = _scale(v for _, ys in series for v in ys)
    series_scaled = [[v * scale for v in ys] for _, ys in series]
    values = [v for ys in series_scaled for v in ys]
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or 0.05
    low, high = max(0.0, low - pad), high + pad
    logs = [math.log(k) for k in ks]
    span = (logs[-1] - logs[0]) or 1.0

    def x(i: int) -> float:
        return LEFT + (logs[i] - logs[0]) / span * (WIDTH - LEFT - RIGHT)

    def y(v: float) -> float:
        return plot_bottom - (v - low) / (high - low) * (plot_bottom - TOP)

    body = _y_axis(low, high, y, scale=scale)
    for i, k in enumerate(ks):
        body.append(f'<text x="{x(i):.1f}" y="{plot_bottom + 14}" text-anchor="middle" class="tick">{k}</text>')
    body.append(f'<text x="{WIDTH / 2}" y="{plot_bottom + 28}" text-anchor="middle" class="axis">k</text>')
    body.append(f'<text x="12" y="{(TOP + plot_bottom) / 2}" transform="rotate(-90 12 {(TOP + plot_bottom) / 2})" '
                f'text-anchor="middle" class="axis">{text(ylabel)}</text>')
    for n, ((name, ys), scaled) in enumerate(zip(series, series_scaled)):
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(scaled))
        body.append(f'<polyline points="{points}" fill="none" stroke="{color(n)}" stroke-width="2"/>')
        for i, (v, at) in enumerate(zip(ys, scaled)):
            tip = f"{isolated(name)}: {ylabel.split('@')[0]}@{ks[i]} = {v:.4f}"
            body.append(f'<circle cx="{x(i):.1f}" cy="{y(at):.1f}" r="3" fill="{color(n)}">'
                        f'<title>{text(tip)}</title></circle>')
        lx, ly = LEFT + (n % 2) * (WIDTH - LEFT) / 2, HEIGHT + 16 * (n // 2) - 4
        body.append(f'<rect x="{lx:.1f}" y="{ly - 8}" width="10" height="10" fill="{color(n)}"/>'
                    f'<text x="{lx + 14:.1f}" y="{ly + 1}" class="legend">{text(name)}</text>')
    return _frame(title, body, height)


def _nice_range(largest: float) -> float:
    for r in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if largest <= r + 1e-12:
            return r
    return 10 ** math.ceil(math.log10(largest))


def histogram(title: str, differences: np.ndarray, bins: int = 20) -> str:
    """Differences ``system - baseline`` per query: non-zero ones binned over [-r, r], ties counted apart."""
    d = np.asarray(differences, dtype=np.float64)
    scale = _scale(d.tolist())
    moved = d[d != 0] * scale
    better, worse = int((d > 0).sum()), int((d < 0).sum())
    ties = len(d) - better - worse
    r = _nice_range(float(np.abs(moved).max())) if len(moved) else 1.0
    counts, edges = np.histogram(moved, bins=bins, range=(-r, r))
    plot_bottom = HEIGHT - BOTTOM
    top = max(1, int(counts.max()) if len(counts) else 1)

    def x(v: float) -> float:
        return LEFT + (v + r) / (2 * r) * (WIDTH - LEFT - RIGHT)

    def y(v: float) -> float:
        return plot_bottom - v / top * (plot_bottom - TOP)

    body = _y_axis(0, top, y, integer=True)
    for count, lo, hi in zip(counts.tolist(), edges[:-1].tolist(), edges[1:].tolist()):
        if count:
            fill = "#2a9d4b" if lo >= 0 else "#d1495b"
            body.append(f'<rect x="{x(lo) + 0.5:.1f}" y="{y(count):.1f}" width="{x(hi) - x(lo) - 1:.1f}" '
                        f'height="{plot_bottom - y(count):.1f}" fill="{fill}">'
                        f'<title>{count} queries with Δ in [{lo / scale:+.3f}, {hi / scale:+.3f})</title></rect>')
    for t in (-r, -r / 2, 0.0, r / 2, r):
        body.append(f'<text x="{x(t):.1f}" y="{plot_bottom + 14}" text-anchor="middle" class="tick">'
                    f'{t / scale:+.2g}</text>')
    body.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{TOP}" y2="{plot_bottom}" class="zero"/>')
    body.append(f'<text x="{WIDTH / 2}" y="{plot_bottom + 28}" text-anchor="middle" class="axis">'
                f'{better} better, {ties} tied (not drawn), {worse} worse; mean Δ {finite_mean(d):+.4f}</text>')
    return _frame(title, body)
