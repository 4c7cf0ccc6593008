"""Static SVG charts for reports (matplotlib, Agg backend, text kept as text).

The SVG is embedded inline in the page, so a report saved as HTML stays self-contained.
Figures are built with `matplotlib.figure.Figure` directly (no pyplot state), which is
thread-safe and avoids pyplot's global figure manager.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: smaller files, selectable, searchable
        "svg.hashsalt": "report",  # stable ids, so the same data gives the same SVG
        "font.size": 9,
        "font.family": "sans-serif",
        # Labels are imported text (system names, domains): "$...$" is not math, "\\" not TeX.
        "text.parse_math": False,
    }
)

from matplotlib.figure import Figure  # noqa: E402

STRONG = {"a": "#1f5fbf", "b": "#b3261e"}
SLIGHT = {"a": "#9dbbe8", "b": "#ec9d97"}


def _svg(fig: Figure) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    # Drop the XML prolog and doctype: the SVG goes inline into an HTML page.
    start = text.find("<svg")
    return re.sub(r"\s+$", "", text[start:])


def kappa_heatmap(
    raters: Sequence[str], matrix: Sequence[Sequence[float | None]], *, title: str
) -> str:
    """The pairwise Cohen's kappa matrix; undefined cells are grey and marked "n/a"."""
    import numpy as np

    n = len(raters)
    size = 1.2 + 0.55 * n
    fig = Figure(figsize=(size + 1.0, size))
    ax = fig.add_axes((0.18, 0.18, 0.62, 0.72))
    values = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-1, vmax=1)  # type: ignore[no-untyped-call]
    ax.set_xticks(range(n), labels=list(raters), rotation=45, ha="right")
    ax.set_yticks(range(n), labels=list(raters))
    if n <= 15:
        for i in range(n):
            for j in range(n):
                v = values[i, j]
                ax.text(
                    j,
                    i,
                    "n/a" if np.isnan(v) else f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8 if n <= 8 else 6,
                )
    ax.set_title(title, fontsize=9)
    cax = fig.add_axes((0.84, 0.18, 0.03, 0.72))
    fig.colorbar(image, cax=cax, label="Cohen's kappa")
    return _svg(fig)


def preference_bars(
    rows: Sequence[tuple[str, int, int, int, int]], *, system_a: str, system_b: str
) -> str:
    """Figure 3 of the VeriScore paper: one horizontal bar per domain, in percent:
    system A strong | A slight | B slight | B strong. `rows` are
    (label, a_strong, a_slight, b_slight, b_strong) counts."""
    # Fixed margins in inches (bars above, axis label and legend below), any number of bars.
    bottom, top = 1.05, 0.15
    height = bottom + top + 0.32 * max(len(rows), 1)
    fig = Figure(figsize=(7.0, height))
    ax = fig.add_axes((0.22, bottom / height, 0.74, 1 - (bottom + top) / height))
    labels = [r[0] for r in rows]
    segments = [
        (1, STRONG["a"], f"{system_a} (strong)"),
        (2, SLIGHT["a"], f"{system_a} (slight)"),
        (3, SLIGHT["b"], f"{system_b} (slight)"),
        (4, STRONG["b"], f"{system_b} (strong)"),
    ]
    y = list(range(len(rows)))[::-1]
    left = [0.0] * len(rows)
    for index, colour, label in segments:
        widths = []
        for r in rows:
            total = sum(r[1:5])
            widths.append(100 * float(r[index]) / total if total else 0.0)
        ax.barh(y, widths, left=left, color=colour, label=label, height=0.7)
        for k, (w, lft) in enumerate(zip(widths, left, strict=True)):
            if w >= 7:
                ax.text(
                    lft + w / 2,
                    y[k],
                    f"{rows[k][index]}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if index in (1, 4) else "black",
                )
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.set_yticks(y, labels=labels)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of judgements")
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=7, frameon=False)
    return _svg(fig)


def bars(labels: Sequence[str], values: Sequence[float], *, xlabel: str, ylabel: str) -> str:
    fig = Figure(figsize=(6.0, 2.4))
    ax = fig.add_axes((0.1, 0.2, 0.87, 0.72))
    ax.bar(range(len(values)), values, color=STRONG["a"])
    ax.set_xticks(range(len(values)), labels=list(labels))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    return _svg(fig)


def scatter(
    points: Sequence[tuple[float, float]],
    systems: Sequence[tuple[str, float, float]],
    *,
    xlabel: str,
    ylabel: str,
) -> str:
    """Per-example scores as dots, each system's mean as a labelled square."""
    fig = Figure(figsize=(4.8, 4.0))
    ax = fig.add_axes((0.14, 0.13, 0.82, 0.8))
    if points:
        ax.scatter(
            [p[0] for p in points],
            [p[1] for p in points],
            s=12,
            alpha=0.5,
            color=STRONG["a"],
            label="response",
            linewidths=0,
        )
    if systems:
        ax.scatter(
            [s[1] for s in systems],
            [s[2] for s in systems],
            s=40,
            marker="s",
            color=STRONG["b"],
            label="system mean",
        )
        for name, x, y in systems:
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.legend(fontsize=7, loc="best")
    return _svg(fig)
