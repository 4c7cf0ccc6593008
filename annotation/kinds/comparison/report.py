"""The comparison kind's preference section: which method people prefer, per domain."""

from __future__ import annotations

from ... import charts, stats
from ...answers import Answers
from ...gold import Gold
from ...models import Project
from ...reports.preference import preference_rows
from ...reports.tables import Chart, Section, Table
from ..protocols import ReportKind


def preference_section(
    project: Project, spec: ReportKind, answers: Answers, golds: list[Gold], *, with_charts: bool
) -> Section | None:
    pref_rows, missing_hard, both_empty = preference_rows(project, spec, answers)
    if not pref_rows:
        return None
    result = stats.preference(pref_rows)
    cells = Table(
        "preference",
        "Extraction-method preference (VeriScore Figure 3)",
        (
            "system A",
            "system B",
            "domain",
            "judgements",
            "A preferred",
            "A strong",
            "A slight",
            "B preferred",
            "B strong",
            "B slight",
            "A rate",
            "B rate",
            "binomial p-value",
        ),
        tuple(
            (
                c.system_a,
                c.system_b,
                c.domain or "all",
                c.n,
                c.a_wins,
                c.a_strong,
                c.a_slight,
                c.b_wins,
                c.b_strong,
                c.b_slight,
                c.a_rate,
                c.b_rate,
                c.p_value,
            )
            for c in result.cells
        ),
    )
    bias = Table(
        "position-bias",
        "Position bias: how often the list shown first won",
        ("domain", "judgements", "list 1 wins", "list 1 rate", "binomial p-value"),
        tuple(
            (b.domain or "all", b.n, b.list1_wins, b.rate, b.p_value) for b in result.position_bias
        ),
    )
    chart_list = _preference_charts(result) if with_charts else []
    notes = [
        "Strong: the annotator did not find it hard to decide; slight: hard to decide. "
        "Every annotator's judgement counts (as in the paper's figure). The p-value is a "
        "two-sided exact binomial test against 50 %.",
    ]
    if both_empty:
        notes.append(
            f"{both_empty} judgement(s) on items whose two lists have no claim (empty or "
            "abstained) are left out: there was nothing to prefer."
        )
    if missing_hard:
        notes.append(
            f"{missing_hard} judgement(s) had no 'hard to decide' answer and count as strong."
        )
    return Section(
        "preference",
        "Extraction-method preference",
        tuple(notes),
        (cells, bias),
        tuple(chart_list),
        data=result,
    )


def _preference_charts(result: stats.PreferenceReport) -> list[Chart]:
    """Strong and slight preferences per domain, a chart per pair of systems."""
    chart_list = []
    for a, b in sorted({(c.system_a, c.system_b) for c in result.cells}):
        bars = [
            (
                "All" if c.domain is None else c.domain,
                c.a_strong,
                c.a_slight,
                c.b_slight,
                c.b_strong,
            )
            for c in result.cells
            if (c.system_a, c.system_b) == (a, b)
        ]
        chart_list.append(
            Chart(f"{a} vs {b}", charts.preference_bars(bars, system_a=a, system_b=b))
        )
    return chart_list
