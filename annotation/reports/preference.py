"""The comparison kind's preference section: which method people prefer, per domain."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from .. import charts, stats
from ..answers import Answers
from ..gold import Gold
from ..kinds import ReportKind
from ..models import Claim, Item, Project
from .tables import Chart, Section, Table

# --------------------------------------------------------------------------- preference


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


def preference_rows(
    project: Project, spec: ReportKind, answers: Answers
) -> tuple[list[tuple[str, str, str, bool, int]], int, int]:
    """(domain, winner, loser, hard, winner position) per judgement between two different
    systems; how many judgements lack the "hard to decide" answer; and how many are on
    items whose two lists have no claim (empty or abstained: nothing to prefer, left out)."""
    of_kind = {c.field: c for c in answers.of_kind(spec.name) if c.level == "item"}
    if (choice := of_kind.get("choice")) is None:
        return [], 0, 0
    # (item, annotator, side as compared, position shown) per choice of a list, in order
    annotators = choice.annotators.tolist()
    choices = [
        (item, annotators[j], choice.values[c], int(choice.raw_values[r]))
        for item, row, raw in zip(
            choice.items.tolist(), choice.codes.tolist(), choice.raw.tolist(), strict=True
        )
        for j, (c, r) in enumerate(zip(row, raw, strict=True))
        if c >= 0 and choice.raw_values[r] in ("1", "2")
    ]
    if not choices:
        return [], 0, 0
    hard: dict[tuple[int, int], bool] = {}
    if (said := of_kind.get("hard")) is not None:
        who = said.annotators.tolist()
        for item, row in zip(said.items.tolist(), said.codes.tolist(), strict=True):
            hard.update(
                {(item, who[j]): said.values[c] == "yes" for j, c in enumerate(row) if c >= 0}
            )

    def has_claims(side: str) -> Exists:
        return Exists(Claim.objects.filter(claim_list=OuterRef(side)))

    # each item's two systems and whether either list has a claim, in one query
    items = (
        Item.objects.filter(project=project, kind=spec.name)
        .annotate(has_a=has_claims("list_a"), has_b=has_claims("list_b"))
        .values_list("pk", "list_a__system__name", "list_b__system__name", "has_a", "has_b")
    )
    systems: dict[int, tuple[str, str]] = {}
    empty: set[int] = set()
    for pk, a, b, has_a, has_b in items:
        systems[pk] = (a, b)
        if not has_a and not has_b:
            empty.add(pk)
    missing_hard = both_empty = 0
    pref_rows: list[tuple[str, str, str, bool, int]] = []
    for item, annotator, side, position in choices:
        pair = systems.get(item)
        if pair is None or pair[0] == pair[1]:
            continue
        if item in empty:
            both_empty += 1
            continue
        winner, loser = pair if side == "a" else pair[::-1]
        if (item, annotator) not in hard:
            missing_hard += 1
        domain = answers.domains[item] or "(no domain)"
        pref_rows.append((domain, winner, loser, hard.get((item, annotator), False), position))
    return pref_rows, missing_hard, both_empty
