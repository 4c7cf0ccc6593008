"""The preferences of a kind that asks which of two systems' lists is better (the
comparison kind's "choice" and "hard"), read for its report section and for planning."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from ..answers import Answers
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
    if (said := answers.fields.get((spec.name, "item", "hard"))) is not None:
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
