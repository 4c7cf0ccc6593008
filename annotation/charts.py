"""Static SVG charts for reports, written out directly (text kept as text).

The SVG is embedded inline in the page, so a report saved as HTML stays self-contained.
Each chart is a few dozen elements written as strings: a report of 20 charts costs a few
milliseconds and no matplotlib import (matplotlib took ~50 ms a figure, mostly laying out
text it then wrote out as text anyway). Every chart is an accessible image (role="img",
its <title> and <desc>), its labels are <text>, and its data is also in the section's
table. Sizes are in points, as before (a 6 x 2.4 inch figure is 432 x 172.8); the page
scales a chart down to the column's width (`figure.chart svg { max-width: 100% }`).
Text width is estimated (0.6 em a character), not measured: long labels are cut with
"…" and keep their whole text in a tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

STRONG = {"a": "#1f5fbf", "b": "#b3261e"}
SLIGHT = {"a": "#9dbbe8", "b": "#ec9d97"}
FONT = 'font-family="sans-serif"'
AXIS = "#333333"
# ColorBrewer's RdYlGn (11 classes), the stops of matplotlib's "RdYlGn" colormap
RDYLGN = (
    "#a50026 #d73027 #f46d43 #fdae61 #fee08b #ffffbf #d9ef8b #a6d96a #66bd63 #1a9850 #006837"
).split()
MISSING = "#dddddd"
EM = 0.6  # the estimated width of a character, in font sizes
MAX_LABEL = 28  # characters of an axis label before it is cut


def _n(x: float) -> str:
    """A coordinate, short: 12.5, 3, -0.25."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: float = 9,
    anchor: str = "middle",
    baseline: str = "central",
    colour: str = "#000000",
    rotate: float | None = None,
    cut: int | None = None,
) -> str:
    shown = text if cut is None or len(text) <= cut else text[: cut - 1] + "…"
    tip = f"<title>{escape(text)}</title>" if shown != text else ""
    turn = f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate else ""
    return (
        f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" text-anchor="{anchor}" '
        f'dominant-baseline="{baseline}" fill="{colour}"{turn}>{tip}{escape(shown)}</text>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, extra: str = "") -> str:
    return f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="{fill}"{extra}/>'


def _line(x1: float, y1: float, x2: float, y2: float) -> str:
    return (
        f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{AXIS}" '
        'stroke-width="0.8"/>'
    )


def _svg(width: float, height: float, title: str, desc: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}pt" '
        f'height="{_n(height)}pt" viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
        f'aria-label="{escape(title)}" {FONT}>'
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>" + "".join(body) + "</svg>"
    )


def _label_width(labels: Sequence[str], size: float) -> float:
    return EM * size * min(max((len(s) for s in labels), default=0), MAX_LABEL)


def _ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) covering lo..hi."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 12) for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def _tick_text(v: float) -> str:
    return f"{v:g}"


def _span(values: Sequence[float]) -> tuple[float, float]:
    """An axis range with a 5 % margin either side (one unit around a single value)."""
    lo, hi = min(values), max(values)
    if hi == lo:
        return lo - 1, hi + 1
    pad = (hi - lo) * 0.05
    return lo - pad, hi + pad


def _colour(value: float) -> str:
    """RdYlGn at value in [-1, 1], linearly between its 11 stops."""
    t = min(max((value + 1) / 2, 0.0), 1.0) * (len(RDYLGN) - 1)
    k = min(int(t), len(RDYLGN) - 2)
    f = t - k
    lo, hi = RDYLGN[k], RDYLGN[k + 1]
    rgb = [round(int(lo[i : i + 2], 16) * (1 - f) + int(hi[i : i + 2], 16) * f) for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _ink(fill: str) -> str:
    """Black or white text, whichever reads better on `fill`."""
    r, g, b = (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return "#ffffff" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "#000000"


# --------------------------------------------------------------------------- charts


def kappa_heatmap(
    raters: Sequence[str], matrix: Sequence[Sequence[float | None]], *, title: str
) -> str:
    """The pairwise Cohen's kappa matrix; undefined cells are grey and marked "n/a"."""
    n = len(raters)
    labels = [str(r) for r in raters]
    cell = 40.0 if n <= 8 else max(12.0, 320.0 / n)
    left = 12 + _label_width(labels, 9)
    top = 24.0
    bottom = 12 + _label_width(labels, 9) * 0.71 + 6
    grid = cell * n
    width = left + grid + 80
    height = top + grid + bottom
    body = [_text(4, 12, title, anchor="start", cut=int((width - 8) / (EM * 9)))]
    undefined = 0
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            x, y = left + j * cell, top + i * cell
            missing = v is None or math.isnan(v)
            undefined += missing
            fill = MISSING if missing else _colour(v)  # type: ignore[arg-type]
            body.append(_rect(x, y, cell, cell, fill))
            if n <= 15:
                body.append(
                    _text(
                        x + cell / 2,
                        y + cell / 2,
                        "n/a" if missing else f"{v:.2f}",
                        size=8 if n <= 8 else 6,
                        colour=_ink(fill),
                    )
                )
    for k, name in enumerate(labels):
        mid = k * cell + cell / 2
        body.append(_text(left - 4, top + mid, name, anchor="end", cut=MAX_LABEL))
        body.append(
            _text(left + mid, top + grid + 6, name, anchor="end", rotate=-45, cut=MAX_LABEL)
        )
    body.append(
        f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(grid)}" height="{_n(grid)}" '
        f'fill="none" stroke="{AXIS}" stroke-width="0.8"/>'
    )
    # the colour scale: 20 steps from -1 (bottom) to 1 (top)
    bar_x, steps = left + grid + 14, 20
    for s in range(steps):
        value = -1 + 2 * (s + 0.5) / steps
        body.append(
            _rect(bar_x, top + grid * (1 - (s + 1) / steps), 10, grid / steps, _colour(value))
        )
    for v in (-1.0, -0.5, 0.0, 0.5, 1.0):
        y = top + grid * (1 - (v + 1) / 2)
        body.append(_line(bar_x + 10, y, bar_x + 13, y))
        body.append(_text(bar_x + 15, y, _tick_text(v), size=8, anchor="start"))
    body.append(_text(bar_x + 48, top + grid / 2, "Cohen's kappa", rotate=-90))
    desc = (
        f"Pairwise Cohen's kappa of {n} annotators, from -1 (red) to 1 (green)"
        + (f"; {undefined} undefined cell(s) in grey" if undefined else "")
        + ". The values are in the pairwise table."
    )
    return _svg(width, height, title, desc, body)


def preference_bars(
    rows: Sequence[tuple[str, int, int, int, int]], *, system_a: str, system_b: str
) -> str:
    """Figure 3 of the VeriScore paper: one horizontal bar per domain, in percent:
    system A strong | A slight | B slight | B strong. `rows` are
    (label, a_strong, a_slight, b_slight, b_strong) counts."""
    width = 504.0  # 7 inches
    left, right, top, bar = 0.22 * width, 0.04 * width, 12.0, 23.0
    plot = width - left - right
    height = top + bar * max(len(rows), 1) + 76
    axis_y = top + bar * len(rows)
    segments = [
        (1, STRONG["a"], f"{system_a} (strong)"),
        (2, SLIGHT["a"], f"{system_a} (slight)"),
        (3, SLIGHT["b"], f"{system_b} (slight)"),
        (4, STRONG["b"], f"{system_b} (strong)"),
    ]
    body = []
    for k, r in enumerate(rows):
        y = top + k * bar + bar * 0.15
        total = sum(r[1:5])
        x = left
        for index, colour, _ in segments:
            w = 100 * float(r[index]) / total if total else 0.0
            body.append(_rect(x, y, plot * w / 100, bar * 0.7, colour))
            if w >= 7:
                body.append(
                    _text(
                        x + plot * w / 200,
                        y + bar * 0.35,
                        str(r[index]),
                        size=7,
                        colour="#ffffff" if index in (1, 4) else "#000000",
                    )
                )
            x += plot * w / 100
        body.append(
            _text(left - 4, y + bar * 0.35, str(r[0]), anchor="end", cut=int(left / (EM * 9)))
        )
    body.append(_line(left, top, left, axis_y))
    body.append(_line(left, axis_y, left + plot, axis_y))
    for v in range(0, 101, 20):
        x = left + plot * v / 100
        body.append(_line(x, axis_y, x, axis_y + 3))
        body.append(_text(x, axis_y + 10, str(v), size=8))
    body.append(_text(left + plot / 2, axis_y + 24, "% of judgements"))
    # the legend: two columns below the axis label
    for k, (_, colour, label) in enumerate(segments):
        x = width / 2 - 150 + (k % 2) * 160
        y = axis_y + 40 + (k // 2) * 14
        body.append(_rect(x, y - 4, 12, 8, colour))
        body.append(_text(x + 16, y, label, size=7, anchor="start", cut=40))
    desc = (
        f"For each of {len(rows)} row(s), the share of judgements preferring {system_a} "
        f"strongly or slightly, then {system_b} slightly or strongly, in percent. "
        "The counts are in the preference table."
    )
    return _svg(width, height, f"{system_a} vs {system_b}", desc, body)


def _axes(
    body: list[str],
    box: tuple[float, float, float, float],
    xs: tuple[float, float],
    ys: tuple[float, float],
    *,
    xlabel: str,
    ylabel: str,
    xticks: bool = True,
    size: float = 9,
) -> None:
    """A plot frame with y ticks (and x ticks) and both axis labels, as text."""
    left, top, w, h = box
    body.append(
        f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(w)}" height="{_n(h)}" fill="none" '
        f'stroke="{AXIS}" stroke-width="0.8"/>'
    )
    for v in _ticks(*ys):
        y = top + h - h * (v - ys[0]) / (ys[1] - ys[0])
        body.append(_line(left - 3, y, left, y))
        body.append(_text(left - 5, y, _tick_text(v), size=8, anchor="end"))
    if xticks:
        for v in _ticks(*xs):
            x = left + w * (v - xs[0]) / (xs[1] - xs[0])
            body.append(_line(x, top + h, x, top + h + 3))
            body.append(_text(x, top + h + 10, _tick_text(v), size=8))
    body.append(_text(left + w / 2, top + h + 25, xlabel, size=size, cut=int(w / (EM * size))))
    body.append(_text(12, top + h / 2, ylabel, size=size, rotate=-90, cut=int(h / (EM * size))))


def bars(labels: Sequence[str], values: Sequence[float], *, xlabel: str, ylabel: str) -> str:
    width, height = 432.0, 172.8
    left, top = 0.1 * width, 0.08 * height
    w, h = 0.87 * width, 0.72 * height
    hi = max([*values, 0.0]) * 1.1 or 1.0
    body: list[str] = []
    _axes(body, (left, top, w, h), (0, 1), (0, hi), xlabel=xlabel, ylabel=ylabel, xticks=False)
    slot = w / max(len(values), 1)
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        bar_h = h * v / hi
        x = left + slot * i + slot * 0.1
        body.append(_rect(x, top + h - bar_h, slot * 0.8, bar_h, STRONG["a"]))
        body.append(_text(x + slot * 0.4, top + h - bar_h - 2, f"{v:.0f}", size=7, baseline="auto"))
        body.append(_text(x + slot * 0.4, top + h + 10, str(label), size=8, cut=12))
    desc = (
        f"{ylabel} for each {xlabel}: "
        + ", ".join(f"{label} {v:.0f}" for label, v in zip(labels, values, strict=True))
        + "."
    )
    return _svg(width, height, f"{ylabel} by {xlabel}", desc, body)


def scatter(
    points: Sequence[tuple[float, float]],
    systems: Sequence[tuple[str, float, float]],
    *,
    xlabel: str,
    ylabel: str,
) -> str:
    """Per-example scores as dots, each system's mean as a labelled square."""
    width, height = 345.6, 288.0
    left, top = 0.14 * width, 0.07 * height
    w, h = 0.82 * width, 0.8 * height
    finite = [
        (x, y) for x, y in [*points, *((s[1], s[2]) for s in systems)] if math.isfinite(x + y)
    ]
    xs = _span([p[0] for p in finite] or [0.0])
    ys = _span([p[1] for p in finite] or [0.0])
    body: list[str] = []
    _axes(body, (left, top, w, h), xs, ys, xlabel=xlabel, ylabel=ylabel, size=8)

    def at(x: float, y: float) -> tuple[float, float]:
        return left + w * (x - xs[0]) / (xs[1] - xs[0]), top + h - h * (y - ys[0]) / (ys[1] - ys[0])

    dots = [at(x, y) for x, y in points if math.isfinite(x + y)]
    if dots:
        body.append(f'<g fill="{STRONG["a"]}" fill-opacity="0.5">')
        body += [f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="2"/>' for cx, cy in dots]
        body.append("</g>")
    for name, x, y in systems:
        if not math.isfinite(x + y):
            continue
        cx, cy = at(x, y)
        body.append(_rect(cx - 3.2, cy - 3.2, 6.4, 6.4, STRONG["b"]))
        body.append(_text(cx + 4, cy - 4, name, size=7, anchor="start", baseline="auto", cut=30))
    legend = [
        (f'<circle cx="0" cy="0" r="2" fill="{STRONG["a"]}" fill-opacity="0.5"/>', "response")
    ] * bool(points)
    legend += [(_rect(-3.2, -3.2, 6.4, 6.4, STRONG["b"]), "system mean")] * bool(systems)
    if legend:
        body.append(
            _rect(left + w - 76, top + 3, 72, 12 * len(legend) + 2, "#ffffff", ' stroke="#cccccc"')
        )
    for k, (mark, label) in enumerate(legend):
        x, y = left + w - 70, top + 10 + 12 * k
        body.append(f'<g transform="translate({_n(x)} {_n(y)})">{mark}</g>')
        body.append(_text(x + 7, y, label, size=7, anchor="start"))
    desc = (
        f"{len(dots)} response(s) as dots and {len(systems)} system mean(s) as squares, "
        f"{xlabel} across, {ylabel} up. The correlations are in the section's tables."
    )
    return _svg(width, height, f"{xlabel} against {ylabel}", desc, body)
