"""Automatic verifiers against the human gold labels."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from .. import kinds, stats
from ..gold import Gold, fetch
from ..kinds import ITEM
from ..models import Claim, Project, Segment, System, Verdict, validate_verifier_collapse
from .tables import Cell, Filters, Section, Table

# --------------------------------------------------------------------------- verifiers


@dataclass(frozen=True)
class _Unit:
    key: str  # "item 12" or "item 3 / segment:2"
    item: int
    target: int  # claim or segment id
    level: str  # the verdict_level of its kind (claim, segment, fact)
    domain: str
    gold: Gold
    document: int
    reference: str | None  # the gold value as a verdict label


def _verifier_sections(
    project: Project, golds_of: dict[str, list[Gold]], filters: Filters
) -> list[Section]:
    verdicts = list(
        Verdict.objects.filter(
            system__project=project, system__kind__in=[System.VERIFIER, System.REFERENCE]
        ).values_list("claim_id", "segment_id", "system__name", "system__kind", "label")
    )
    if not verdicts:
        return []
    units: list[_Unit] = []
    specs = [s for s in kinds.all_specs() if s.verdict_field]
    for spec in specs:
        mine = [g for g in golds_of[spec.name] if g.field == spec.verdict_field]
        for t in spec.verdict_targets(project, mine) if mine else []:
            key = f"item {t.gold.item}" + ("" if t.gold.unit == ITEM else f" / {t.gold.unit}")
            units.append(
                _Unit(
                    key,
                    t.gold.item,
                    t.target,
                    spec.verdict_level,
                    t.domain,
                    t.gold,
                    t.document,
                    spec.as_verdict(t.gold.value),
                )
            )
    # verdicts per system, keyed by (Claim or Segment, id)
    by_system: dict[tuple[str, str], dict[tuple[Any, int], str]] = defaultdict(dict)
    for claim, segment, name, kind, label in verdicts:
        if claim is not None:
            by_system[(name, kind)][(Claim, claim)] = label
        else:
            by_system[(name, kind)][(Segment, segment)] = label
    if not units:
        return [
            Section(
                "verifiers",
                "Verifiers against human labels",
                (
                    f"{len(by_system)} system(s) have verdicts, "
                    "but no claim or segment has a human "
                    "gold label yet (within the filters).",
                ),
            )
        ]

    systems = sorted(by_system)
    rules = _collapse_rules(project)
    score_rows: list[tuple[Cell, ...]] = []
    class_rows: list[tuple[Cell, ...]] = []
    confusion_tables: list[Table] = []
    disagreement_rows: list[tuple[Cell, ...]] = []
    mcnemar_rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    reports: dict[tuple[str, str, str], stats.VerifierReport] = {}
    aligned: dict[tuple[str, str], tuple[list[_Unit], list[str | None]]] = {}
    for spec in specs:
        level = spec.verdict_level
        target = spec.verdict_target
        level_units = [u for u in units if u.level == level]
        if not level_units:
            continue
        ref_raw = [u.reference for u in level_units]
        for name, kind in systems:
            labels = by_system[(name, kind)]
            # read like the gold labels ("true"/"false" on a segment: supported/unsupported)
            pred = [spec.as_verdict(labels.get((target, u.target))) for u in level_units]
            if not any(p is not None for p in pred):
                continue
            aligned[(name, level)] = (level_units, pred)
            mode_rules = rules if level == "claim" else {m: None for m in spec.verdict_modes}
            for mode, rule in mode_rules.items():
                try:
                    rep = stats.verifier_vs_reference(
                        y_true=ref_raw,
                        y_pred=pred,
                        collapse=rule,
                        mode=None if rule is not None else mode,  # type: ignore[arg-type]
                        units=[u.key for u in level_units],
                    )
                except ValueError as e:
                    notes.append(f"{name}: no {mode} scores ({e}).")
                    continue
                reports[(name, level, mode)] = rep
                score_rows.append(_score_row(name, kind, level, mode, rep))
                class_rows += [
                    (
                        name,
                        level,
                        mode,
                        c.label,
                        c.precision,
                        c.recall,
                        c.f1,
                        c.support,
                        c.predicted,
                    )
                    for c in rep.per_class
                ]
                confusion_tables.append(
                    Table(
                        f"confusion-{_slug(name)}-{level}-{mode}",
                        f"{name}: confusion matrix ({level}, {mode}); rows human, columns system",
                        ("human \\ system", *rep.labels),
                        tuple(
                            (label, *row)
                            for label, row in zip(rep.labels, rep.confusion, strict=True)
                        ),
                    )
                )
                by_key = {u.key: u for u in level_units}
                for d in rep.disagreements:
                    u = by_key[d.unit]  # type: ignore[index]
                    disagreement_rows.append(
                        (
                            name,
                            level,
                            mode,
                            u.item,
                            u.gold.unit,
                            u.domain,
                            u.target,
                            d.reference,
                            d.predicted,
                            labels.get((target, u.target)),
                            u.gold.value,
                            " ".join(f"{k}:{v}" for k, v in u.gold.votes.items()),
                            u.gold.provenance,
                        )
                    )
            if spec.verdict_target is not Claim:  # segments add up to a response (FELM)
                response = _response_level(level_units, pred, ref_raw)
                if response is not None:
                    reports[(name, "response", "binary")] = response
                    score_rows.append(_score_row(name, kind, "response", "binary", response))
        # McNemar between every two systems on the units both labelled.
        named = [(n, k) for n, k in systems if (n, level) in aligned]
        for i, (a, _) in enumerate(named):
            for b, _ in named[i + 1 :]:
                pred_a = aligned[(a, level)][1]
                pred_b = aligned[(b, level)][1]
                mode_rules = rules if level == "claim" else {m: None for m in spec.verdict_modes}
                for mode, rule in mode_rules.items():
                    if (a, level, mode) not in reports or (b, level, mode) not in reports:
                        continue
                    m = stats.mcnemar_test(
                        pred_a,
                        pred_b,
                        ref_raw,
                        collapse=rule,
                        mode="binary" if rule is not None else mode,  # type: ignore[arg-type]
                    )
                    mcnemar_rows.append(
                        (
                            a,
                            b,
                            level,
                            mode,
                            m.n,
                            m.both_correct,
                            m.only_a_correct,
                            m.only_b_correct,
                            m.both_wrong,
                            m.method,
                            m.statistic,
                            m.p_value,
                            m.undefined_reason or "",
                        )
                    )
    _add_texts(disagreement_rows, {s.verdict_level: s.verdict_target for s in specs})

    tables = [
        Table(
            "verifier-scores",
            "Verifiers against human gold labels (VeriScore Table 11)",
            (
                "system",
                "kind",
                "level",
                "mode",
                "units",
                "excluded",
                "overall F1 (macro)",
                "supported F1",
                "unsupported F1",
                "contradicted F1",
                "inconclusive F1",
                "accuracy",
                "balanced accuracy",
                "Cohen's kappa",
                "MCC",
                "weighted F1",
                "micro F1",
            ),
            tuple(score_rows),
        ),
        Table(
            "verifier-classes",
            "Precision, recall and F1 per class",
            (
                "system",
                "level",
                "mode",
                "class",
                "precision",
                "recall",
                "F1",
                "support",
                "predicted",
            ),
            tuple(class_rows),
        ),
    ]
    if mcnemar_rows:
        tables.append(
            Table(
                "mcnemar",
                "McNemar's test between systems on the same units",
                (
                    "system A",
                    "system B",
                    "level",
                    "mode",
                    "units",
                    "both correct",
                    "only A correct",
                    "only B correct",
                    "both wrong",
                    "method",
                    "statistic",
                    "p-value",
                    "note",
                ),
                tuple(mcnemar_rows),
            )
        )
    tables += confusion_tables
    tables.append(
        Table(
            "verifier-disagreements",
            "Units where a system and the human gold label disagree",
            (
                "system",
                "level",
                "mode",
                "item",
                "unit",
                "domain",
                "claim or segment id",
                "human (as scored)",
                "system (as scored)",
                "system label",
                "human gold",
                "human votes",
                "gold provenance",
                "text",
            ),
            tuple(disagreement_rows),
        )
    )
    if rules is not _DEFAULT_RULES:
        notes.insert(
            0,
            "Claim labels scored under the project's collapse rules: "
            + "; ".join(
                f"{name}: " + (", ".join(f"{k} -> {v}" for k, v in rule.items()) or "as labelled")
                for name, rule in rules.items()
                if rule is not None
            )
            + ".",
        )
    notes.insert(
        0,
        "Binary mode: contradicted and inconclusive count as unsupported. Overall F1 "
        "is the macro mean over classes; VeriScore's published 'Overall F1' equals its "
        "supported F1. Segment labels true/false read as supported/unsupported; a "
        "response is unsupported when any of its segments is (FELM).",
    )
    return [
        Section(
            "verifiers", "Verifiers against human labels", tuple(notes), tuple(tables), data=reports
        )
    ]


# Claim verdicts are scored under each of the project's collapse rules; without any, under
# VeriScore's binary rule (Table 11) and as ternary labels. Segments are true/false.
_DEFAULT_RULES: dict[str, dict[str, str] | None] = {"binary": None, "ternary": None}


def _collapse_rules(project: Project) -> dict[str, dict[str, str] | None]:
    declared = project.verifier_collapse
    if not declared:
        return _DEFAULT_RULES
    validate_verifier_collapse(declared)
    return {name: dict(rule) for name, rule in declared.items()}


def _score_row(
    name: str, kind: str, level: str, mode: str, rep: stats.VerifierReport
) -> tuple[Cell, ...]:
    def f1(label: str) -> float | None:
        return rep.scores(label).f1 if label in rep.labels else None

    return (
        name,
        kind,
        level,
        mode,
        rep.n,
        sum(rep.excluded.values()),
        rep.macro_f1.value,
        f1(stats.SUPPORTED),
        f1(stats.UNSUPPORTED),
        f1(stats.CONTRADICTED),
        f1(stats.INCONCLUSIVE),
        rep.accuracy.value,
        rep.balanced_accuracy.value,
        rep.kappa.value,
        rep.mcc.value if rep.mcc else None,
        rep.weighted.f1 if rep.weighted else None,
        rep.micro.f1 if rep.micro else None,
    )


def _response_level(
    units: list[_Unit], pred: list[str | None], ref: list[str | None]
) -> stats.VerifierReport | None:
    both = [(u, p, r) for u, p, r in zip(units, pred, ref, strict=True) if p is not None]
    if not both:
        return None
    docs = [u.document for u, _, _ in both]
    pred_resp = stats.response_labels([p for _, p, _ in both], docs)
    ref_resp = stats.response_labels([r for _, _, r in both], docs)
    keys = list(ref_resp)
    return stats.verifier_vs_reference(
        y_true=[ref_resp[k] for k in keys],
        y_pred=[pred_resp[k] for k in keys],
        mode="binary",
        units=[f"document {k}" for k in keys],
    )


def _add_texts(rows: list[tuple[Cell, ...]], models: dict[str, Any]) -> None:
    """Each disagreement row gets the text of its claim or segment."""
    ids: dict[Any, set[Any]] = defaultdict(set)
    for row in rows:
        ids[models[row[1]]].add(row[6])
    texts = {
        (model, pk): text
        for model, pks in ids.items()
        for pk, text in fetch(model.objects.filter(pk__in=pks).values_list("pk", "text"))
    }
    for i, row in enumerate(rows):
        text = texts.get((models[row[1]], row[6]), "")
        rows[i] = (*row, text if len(text) <= 300 else text[:297] + "...")


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-") or "system"
