"""Report objects (filters, tables, charts, sections, the report) and their
export as JSON, CSV and LaTeX."""

from __future__ import annotations

import csv
import io
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from .. import safecsv

logger = logging.getLogger(__name__)

Cell = str | int | float | None
DISPLAY_LIMIT = 100  # rows shown on the page for long lists; exports hold all of them


# --------------------------------------------------------------------------- containers


@dataclass(frozen=True)
class Filters:
    annotators: tuple[int, ...] = ()  # user ids; empty = everyone
    domains: tuple[str, ...] = ()
    date_from: date | None = None  # on Assignment.submitted_at, inclusive
    date_to: date | None = None

    @property
    def active(self) -> bool:
        return bool(self.annotators or self.domains or self.date_from or self.date_to)

    def describe(self, names: dict[int, str]) -> str:
        parts = []
        if self.annotators:
            parts.append("annotators " + ", ".join(names.get(a, f"#{a}") for a in self.annotators))
        if self.domains:
            parts.append("domains " + ", ".join(d or "(none)" for d in self.domains))
        if self.date_from or self.date_to:
            parts.append(f"submitted {self.date_from or '…'} to {self.date_to or '…'}")
        return "; ".join(parts) or "none"


@dataclass(frozen=True)
class Table:
    name: str  # unique within a report, used in export URLs and file names
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    note: str = ""
    decimals: int = 3  # for display and LaTeX; CSV and JSON keep full precision
    # per row: a page link for its first cell ("" for none); the page only, not exported
    links: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"table {self.name}: column names must be unique")

    def as_dicts(self) -> list[dict[str, Cell]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def display_rows(self, limit: int | None = None) -> list[list[str]]:
        rows = self.rows if limit is None else self.rows[:limit]
        return [
            [_display(col, v, self.decimals) for col, v in zip(self.columns, row, strict=True)]
            for row in rows
        ]

    @property
    def truncated(self) -> bool:
        return len(self.rows) > DISPLAY_LIMIT

    @property
    def shown(self) -> int:
        """How many rows the page shows."""
        return min(len(self.rows), DISPLAY_LIMIT)

    @property
    def page_rows(self) -> list[list[str]]:
        return self.display_rows(DISPLAY_LIMIT)

    @property
    def page_body(self) -> SafeString:
        """The page's <tbody> rows, as the template's {% for %} over page_rows wrote them
        (each cell escaped): one join instead of a template node per cell."""
        rows = self.page_rows
        if not rows:
            return format_html('<tr><td colspan="{}">No rows.</td></tr>', len(self.columns))
        cells: list[list[str]] = [[escape(v) for v in row] for row in rows]
        for row, link in zip(cells, self.links, strict=False):
            if link:  # the first cell opens the figure's units (reports.drilldown)
                row[0] = format_html('<a href="{}">{}</a>', link, mark_safe(row[0]))  # noqa: S308
        return mark_safe(  # noqa: S308 - every cell escaped here
            "".join("<tr>" + "".join([f"<td>{v}</td>" for v in row]) + "</tr>" for row in cells)
        )

    @property
    def numeric(self) -> tuple[bool, ...]:
        return tuple(
            all(isinstance(row[i], int | float) or row[i] is None for row in self.rows)
            and any(row[i] is not None for row in self.rows)
            for i in range(len(self.columns))
        )


@dataclass(frozen=True)
class Chart:
    title: str
    svg: str


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    notes: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    charts: tuple[Chart, ...] = ()
    # The stats.py objects behind the tables, for callers and tests; not exported.
    data: Any = field(default=None, compare=False, repr=False)
    error: str | None = None  # set when the section's computation failed


@dataclass(frozen=True)
class Report:
    project_id: int
    project_name: str
    generated_at: datetime
    filters: Filters
    filters_text: str
    real_names: bool
    bootstrap: int
    seed: int
    sections: tuple[Section, ...]
    plan: bool = False  # the planning section was asked for (else a link to ask)

    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]

    def without_data(self) -> Report:
        """The report without its sections' stats objects: what pages and downloads show
        (tables, charts, notes), a third of the pickled size (they repeat the tables)."""
        return replace(self, sections=tuple(replace(s, data=None) for s in self.sections))

    def table(self, name: str) -> Table:
        for t in self.tables():
            if t.name == name:
                return t
        raise KeyError(name)

    def section(self, slug: str) -> Section | None:
        return next((s for s in self.sections if s.slug == slug), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "project": {"id": self.project_id, "name": self.project_name},
            "generated_at": self.generated_at.isoformat(),
            "filters": self.filters_text,
            "annotators": "usernames" if self.real_names else "pseudonyms (A<n>)",
            "bootstrap_resamples": self.bootstrap,
            "seed": self.seed,
            "sections": [
                {
                    "slug": s.slug,
                    "title": s.title,
                    "notes": list(s.notes),
                    "tables": [table_json(t) for t in s.tables],
                }
                for s in self.sections
            ],
        }


# --------------------------------------------------------------------------- formats


def _display(column: str, value: Cell, decimals: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if "p-value" in column:
            return f"{value:.3g}" if value >= 0.001 else "<0.001"
        text = f"{value:.{decimals}f}"
        # a small negative value rounds to zero: "0.000", never "-0.000"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    return str(value)


def table_json(table: Table) -> dict[str, Any]:
    return {
        "name": table.name,
        "title": table.title,
        "note": table.note,
        "columns": list(table.columns),
        "rows": table.as_dicts(),
    }


def table_csv(table: Table) -> str:
    """The table as CSV, text cells neutralised as safecsv does (numbers need not be; None
    is written empty by the csv module). Each column's distinct values are checked, and
    only a column holding a text to neutralise is rewritten (a 60,000-row table holds
    840,000 cells and a few such texts at most)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([safecsv.cell(c) for c in table.columns])
    columns = list(zip(*table.rows, strict=True))
    for i, column in enumerate(columns):
        unsafe = {
            v: safecsv.cell(v)
            for v in set(column)
            if isinstance(v, str) and v.startswith(safecsv.TRIGGERS)
        }
        if any(v != safe for v, safe in unsafe.items()):
            columns[i] = tuple([unsafe.get(v, v) if isinstance(v, str) else v for v in column])
    writer.writerows(zip(*columns, strict=True))
    return out.getvalue()


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def table_latex(table: Table) -> str:
    """A booktabs table; numbers right-aligned and rounded to 3 decimals."""
    align = "".join("r" if num else "l" for num in table.numeric)
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.title)}}}",
        rf"\label{{tab:{latex_escape(table.name)}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    for row in table.display_rows():
        lines.append(" & ".join(latex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def failed_section(slug: str, title: str, error: Exception) -> Section:
    logger.exception("report section %s failed", slug, exc_info=error)
    message = f"{type(error).__name__}: {error}"
    return Section(slug, title, (f"This section could not be computed: {message}",), error=message)


def isolated(
    slug: str, title: str, build: Callable[[], list[Section] | Section | None]
) -> list[Section]:
    """One section's computation; when it fails, the section shows the error, the rest stays."""
    try:
        built = build()
    except Exception as error:  # noqa: BLE001 - any failure stays inside its section
        return [failed_section(slug, title, error)]
    if built is None:
        return []
    return built if isinstance(built, list) else [built]


def report_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=1, default=str)


def table_text(table: Table, fmt: str) -> str:
    """The table as a download: fmt "csv", "json" or "tex"."""
    if fmt == "csv":
        return table_csv(table)
    if fmt == "json":
        return json.dumps(table_json(table), indent=1)
    if fmt == "tex":
        return table_latex(table)
    raise ValueError(f"unknown table format {fmt!r}")


def all_tables_csv(tables: Sequence[Table]) -> str:
    """Several tables in one CSV file, each after a "# table: <name>" line."""
    return "\n".join(f"# table: {t.name}\n{table_csv(t)}" for t in tables)
