"""The annotator page: per annotator, by pseudonym, for the project's
researchers only: items done, active time per item, known-answer accuracy with its
Wilson interval, Cohen's kappa with each other annotator, the annotator models'
reliability (Dawid-Skene confusion matrix, MACE competence) and careless answering (the
one definition, `stats.careless`, through `hiring.careless_of` as the hiring rules use it).

The labels are each kind's main field on the item (the field the hiring rules watch),
read with plain ORM queries from the submitted answers to regular items (not training,
check or example items), compared as the kind compares answers (a swapped comparison
is put back). Tables, so the page, CSV and JSON share them (`reports.tables`)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable
from itertools import combinations

from django.urls import reverse
from django.utils.http import urlencode

from .. import hiring, kinds, stats
from ..hiring.services import careless_of
from ..models import Answer, Assignment, Membership, Project
from ..stats import crowd
from .tables import Cell, Table

# MACE with one restart (crowd-kit's default is 10): the page fits it while it answers
MACE_RESTARTS = 1

Labels = dict[str, list[tuple[int, str, Hashable]]]  # kind -> (item, pseudonym, label)


def main_field_labels(project: Project) -> Labels:
    """The main field's submitted labels on regular items, per kind."""
    names = dict(project.memberships.values_list("user_id", "pseudonym"))
    main = {spec.name: spec.main_field for spec in kinds.all_specs()}
    rows = (
        Answer.objects.filter(
            assignment__item__project=project,
            assignment__status=Assignment.SUBMITTED,
            unit="item",
        )
        .filter(hiring.regular("assignment__item_id"))
        .values_list(
            "assignment__item_id",
            "assignment__item__kind",
            "assignment__annotator_id",
            "assignment__swapped",
            "field",
            "value",
        )
        .order_by("assignment__item_id", "assignment__annotator_id")
    )
    by_kind: dict[str, list[tuple[int, str, Hashable]]] = defaultdict(list)
    for item, kind, annotator, swapped, field, value in rows:
        if field != main.get(kind) or value in (None, "") or annotator not in names:
            continue
        label = kinds.get(kind).comparable(field, value, swapped)
        by_kind[kind].append((item, names[annotator], label))
    return dict(by_kind)


def _seconds(project: Project) -> dict[int, list[float]]:
    out: dict[int, list[float]] = defaultdict(list)
    done = (
        Assignment.objects.filter(item__project=project, status=Assignment.SUBMITTED)
        .filter(hiring.regular())
        .values_list("annotator_id", "active_seconds")
    )
    for annotator, seconds in done:
        out[annotator].append(float(seconds or 0))
    return out


def annotator_tables(project: Project) -> list[Table]:
    """The page's three tables: `annotators` (one row per annotator), `annotator_kappa`
    (Cohen's kappa per pair and kind) and `annotator_confusion` (Dawid-Skene's matrices)."""
    # a removed member's answers stay: their row too, marked
    members = list(
        project.memberships.filter(role__in=[Membership.ANNOTATOR, Membership.REMOVED]).order_by(
            "pseudonym"
        )
    )
    labels = main_field_labels(project)
    seconds = _seconds(project)
    confusion_rows, competence = _crowd_rows(labels)
    summary = _summary_rows(project, members, seconds, competence)
    kappa_rows = _kappa_rows(project, labels)
    return [
        Table(
            "annotators",
            "Annotators",
            (
                "annotator",
                "items_done",
                "median_active_s",
                "active_s_q1",
                "active_s_q3",
                "check_units",
                "check_accuracy",
                "check_ci_low",
                "check_ci_high",
                "mace_competence",
                "careless",
                "careless_reasons",
            ),
            tuple(summary),
            note=(
                "Items done: submitted regular items; active time per item: median and"
                " quartiles; known-answer accuracy with its 95 % Wilson interval; MACE's"
                " competence per kind (probability the annotator knows rather than"
                " guesses); careless answering as the hiring rules define it."
            ),
        ),
        Table(
            "annotator_kappa",
            "Cohen's kappa between annotators",
            (
                "annotator_a",
                "annotator_b",
                "kind",
                "n_units",
                "kappa",
                "undefined_reason",
                "disagreements_url",
            ),
            tuple(kappa_rows),
            note=(
                "On the kind's main field, over the items both annotators answered;"
                " disagreements_url lists the items they answered differently."
            ),
        ),
        Table(
            "annotator_confusion",
            "Dawid-Skene confusion matrices",
            ("annotator", "kind", "true_label", "given_label", "probability"),
            tuple(confusion_rows),
            note="P(the annotator gives given_label | the true label is true_label).",
        ),
    ]


def _crowd_rows(
    labels: Labels,
) -> tuple[list[tuple[str, str, str, str, float]], dict[str, list[str]]]:
    """Dawid-Skene's confusion rows and MACE's competence per annotator, kind by kind."""
    confusion_rows: list[tuple[str, str, str, str, float]] = []
    competence: dict[str, list[str]] = defaultdict(list)
    for kind, rows in sorted(labels.items()):
        ds = crowd.dawid_skene(rows)
        for name, reliability in sorted(ds.annotators.items(), key=lambda kv: str(kv[0])):
            for true, given in (reliability.confusion or {}).items():
                for label, p in given.items():
                    confusion_rows.append((str(name), kind, str(true), str(label), p))
        for name, reliability in crowd.mace(rows, n_restarts=MACE_RESTARTS).annotators.items():
            competence[str(name)].append(f"{kind}: {reliability.competence:.3f}")
    return confusion_rows, competence


def _summary_rows(
    project: Project,
    members: list[Membership],
    seconds: dict[int, list[float]],
    competence: dict[str, list[str]],
) -> list[tuple[Cell, ...]]:
    """One row per annotator: items, active time, checks, competence, careless answers."""
    summary: list[tuple[Cell, ...]] = []
    for m in members:
        own = seconds.get(m.user_id, [])
        quartiles = statistics.quantiles(own, n=4) if len(own) >= 2 else None
        _, _, checks = hiring.annotator_quality(m.user_id, project)
        ci = checks.wilson()
        careless = careless_of(m)
        summary.append(
            (
                m.pseudonym + (" (removed member)" if m.role == Membership.REMOVED else ""),
                len(own),
                statistics.median(own) if own else None,
                quartiles[0] if quartiles else None,
                quartiles[2] if quartiles else None,
                checks.units,
                checks.share,
                ci[0] if ci else None,
                ci[1] if ci else None,
                "; ".join(competence.get(m.pseudonym, [])),
                "yes" if careless.careless else "no",
                "; ".join(careless.reasons),
            )
        )
    return summary


def _kappa_rows(project: Project, labels: Labels) -> list[tuple[Cell, ...]]:
    """Cohen's kappa per pair of annotators and kind, with the link to their disagreements."""
    kappa_rows: list[tuple[Cell, ...]] = []
    drill = reverse("disagreements", args=[project.pk])
    for kind, rows in sorted(labels.items()):
        per: dict[str, dict[int, Hashable]] = defaultdict(dict)
        for item, name, label in rows:
            per[name][item] = label
        for a, b in combinations(sorted(per), 2):
            shared = sorted(set(per[a]) & set(per[b]))
            if not shared:
                continue
            kappa = stats.cohen_kappa([per[a][i] for i in shared], [per[b][i] for i in shared])
            query = urlencode({"kind": kind, "field": kinds.get(kind).main_field, "a": a, "b": b})
            kappa_rows.append(
                (
                    a,
                    b,
                    kind,
                    len(shared),
                    kappa.value,
                    kappa.undefined_reason or "",
                    f"{drill}?{query}",
                )
            )
    return kappa_rows
