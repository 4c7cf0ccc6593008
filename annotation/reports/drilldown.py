"""The agreement tables linked to the disagreement drill-down: each field of the
overview, each category of a per-category kappa and each pair of annotators opens the
units behind the figure (`/p/<id>/disagreements/`, researchers only). The links are the
page's (`Table.links`), never exported (CSV, JSON and LaTeX)."""

from __future__ import annotations

from dataclasses import replace

from django.urls import reverse
from django.utils.http import urlencode

from .. import kinds
from ..models import Membership
from .agreement import agreement_sections
from .queries import ReportData
from .tables import Cell, Section


def linked_agreement_sections(data: ReportData) -> list[Section]:
    """`agreement_sections`, their tables linked to the drill-down."""
    sections = agreement_sections(data)
    if not sections:
        return sections
    base = reverse("disagreements", args=[data.project.pk])
    # the report's names (pseudonyms or usernames) -> the pseudonyms the drill-down takes
    pseudonym = {
        data.names.get(uid, name): name
        for uid, name in Membership.objects.filter(project=data.project).values_list(
            "user_id", "pseudonym"
        )
    }
    fields = {
        f"agreement-{spec.name}-{a.field}": (spec.name, a.field)
        for spec in kinds.all_specs()
        for a in spec.agreement
    }
    return [_linked(s, base, fields, pseudonym) for s in sections]


def _linked(
    section: Section,
    base: str,
    fields: dict[str, tuple[str, str]],
    pseudonym: dict[str, str],
) -> Section:
    def url(**params: str) -> str:
        return f"{base}?{urlencode(params)}"

    def pair_url(kind: str, fld: str, row: tuple[Cell, ...]) -> str:
        a, b = pseudonym.get(str(row[0])), pseudonym.get(str(row[1]))
        return "" if a is None or b is None else url(kind=kind, field=fld, a=a, b=b)

    tables = []
    for t in section.tables:
        links: tuple[str, ...] = ()
        if t.name == "agreement-overview":
            links = tuple(url(kind=str(r[0]), field=str(r[2])) for r in t.rows)
        elif section.slug in fields:
            kind, fld = fields[section.slug]
            if t.name == f"{section.slug}-categories":
                links = tuple(url(kind=kind, field=fld, category=str(r[0])) for r in t.rows)
            elif t.name == f"{section.slug}-pairwise":
                links = tuple(pair_url(kind, fld, r) for r in t.rows)
        tables.append(replace(t, links=links) if links else t)
    return replace(section, tables=tuple(tables))
