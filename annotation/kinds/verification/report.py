"""The verification kind's report sections (its report_sections): the claim labels'
distribution, the stance of search results by rank."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from ... import charts
from ...answers import Answers
from ...gold import Gold
from ...models import Project
from ...reports.labels import label_distribution
from ...reports.tables import Chart, Section, Table
from ..protocols import ReportKind


def claim_labels(
    project: Project, spec: ReportKind, answers: Answers, golds: list[Gold], *, with_charts: bool
) -> Section | None:
    return label_distribution(
        spec,
        golds,
        "claim-labels",
        "Claim labels (VeriScore Table 2)",
        "claims",
        "A tie with no adjudication counts as inconclusive (not enough information), as in "
        "the paper.",
    )


def evidence_ranks(
    project: Project, spec: ReportKind, answers: Answers, golds: list[Gold], *, with_charts: bool
) -> Section | None:
    # counted per (unit name, value) at once: many stances, a few distinct unit names
    stances: Counter[tuple[str, str]] = Counter()
    for codes in answers.of_kind(spec.name):
        if codes.field != "stance":
            continue
        names, name_of = np.unique(np.array(codes.units), return_inverse=True)
        answered = codes.codes >= 0
        n_values = len(codes.values)
        flat = (name_of.reshape(-1, 1) * n_values + codes.codes)[answered]
        for cell, n in enumerate(np.bincount(flat, minlength=len(names) * n_values).tolist()):
            if n:
                stances[str(names[cell // n_values]), codes.values[cell % n_values]] += n
    if not stances:
        return None
    by_rank: dict[int, Counter[str]] = defaultdict(Counter)
    for (unit, value), n in stances.items():
        try:
            rank = int(unit.split(":", 1)[1])
        except ValueError:
            continue
        by_rank[rank][value] += n
    table_rows = [
        (
            rank,
            c.total(),
            c["supports"],
            c["contradicts"],
            c["inconclusive"],
            100 * (c["supports"] + c["contradicts"]) / c.total(),  # each rank has a stance
        )
        for rank, c in sorted(by_rank.items())
    ]
    chart_list = []
    if with_charts:
        chart_list.append(
            Chart(
                "Informative search results by rank",
                charts.bars(
                    [str(r[0]) for r in table_rows],
                    [float(r[5]) for r in table_rows],
                    xlabel="search result rank",
                    ylabel="% informative",
                ),
            )
        )
    return Section(
        "evidence-ranks",
        "Informative search results by rank (VeriScore §3.3)",
        (
            "A search result is informative when an annotator marked it as supporting or "
            "contradicting the claim; every annotator's judgement counts.",
        ),
        (
            Table(
                "evidence-ranks",
                "How often each search-result rank was informative",
                (
                    "rank",
                    "judgements",
                    "supports",
                    "contradicts",
                    "inconclusive",
                    "% informative",
                ),
                tuple(table_rows),
                decimals=1,
            ),
        ),
        tuple(chart_list),
    )
