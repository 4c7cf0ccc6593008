"""The preferences of a kind that asks which of two systems' lists is better (the
comparison kind's "choice" and "hard"), read for its report section and for planning."""

from __future__ import annotations

import numpy as np
from django.db.models import Exists, OuterRef

from ..answers import Answers, fetch
from ..kinds import ReportKind
from ..models import Claim, Item, Project


def preference_rows(
    project: Project, spec: ReportKind, answers: Answers
) -> tuple[list[tuple[str, str, str, bool, int]], int, int]:
    """(domain, winner, loser, hard, winner position) per judgement between two different
    systems; how many judgements lack the "hard to decide" answer; and how many are on
    items whose two lists have no claim (empty or abstained: nothing to prefer, left out)."""
    if (choice := answers.fields.get((spec.name, "item", "choice"))) is None:
        return [], 0, 0
    # (item, annotator, side as compared, position shown) per choice of a list (a raw
    # value "1" or "2"), unit by unit, annotator by annotator
    position = np.array([int(v) if v in ("1", "2") else 0 for v in choice.raw_values] + [0])
    unit, column = np.nonzero(position[choice.raw] > 0)  # raw -1 (no answer): 0
    choices = list(
        zip(
            choice.items[unit].tolist(),
            choice.annotators[column].tolist(),
            map(choice.values.__getitem__, choice.codes[unit, column].tolist()),
            position[choice.raw[unit, column]].tolist(),
            strict=True,
        )
    )
    if not choices:
        return [], 0, 0
    hard: dict[tuple[int, int], bool] = {}
    if (said := answers.fields.get((spec.name, "item", "hard"))) is not None:
        unit, column = np.nonzero(said.codes >= 0)
        yes = said.codes[unit, column] == (said.values.index("yes") if "yes" in said.values else -2)
        who = zip(said.items[unit].tolist(), said.annotators[column].tolist(), strict=True)
        hard = dict(zip(who, yes.tolist(), strict=True))

    def has_claims(side: str) -> Exists:
        return Exists(Claim.objects.filter(claim_list=OuterRef(side)))

    # each item's two systems and whether either list has a claim, in one query (its rows
    # as the cursor gives them: the flags 0/1 on SQLite, booleans on PostgreSQL)
    items = (
        Item.objects.filter(project=project, kind=spec.name)
        .annotate(has_a=has_claims("list_a"), has_b=has_claims("list_b"))
        .values_list("pk", "list_a__system__name", "list_b__system__name", "has_a", "has_b")
    )
    systems: dict[int, tuple[str, str]] = {}
    empty: set[int] = set()
    for pk, a, b, has_a, has_b in fetch(items):
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
