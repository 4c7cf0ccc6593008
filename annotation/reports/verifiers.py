"""Automatic verifiers against the human gold labels."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations, compress
from typing import Any, NamedTuple, cast

from .. import kinds, stats
from ..answers import fetch
from ..gold import Gold
from ..kinds import ReportKind
from ..models import Claim, Project, Segment, validate_verifier_collapse
from ..stats.classification import map_each
from .queries import ReportData
from .tables import Cell, Section, Table


class _Level(NamedTuple):
    """A kind's units with a human gold label, as the columns every system's scoring reads
    (a unit is its place in the columns: the disagreements name it so)."""

    targets: list[int]  # claim or segment ids
    domains: list[str]
    golds: list[Gold]
    documents: list[int]
    reference: list[str | None]  # the gold values as verdict labels
    votes: dict[int, str]  # a unit -> its gold's votes as shown, made when first shown


Labels = dict[Any, dict[int, str]]  # Claim or Segment -> id -> a system's label


@dataclass
class _Scores:
    """What the verifier section collects, system by system and level by level."""

    score_rows: list[tuple[Cell, ...]] = field(default_factory=list)
    class_rows: list[tuple[Cell, ...]] = field(default_factory=list)
    confusion_tables: list[Table] = field(default_factory=list)
    disagreement_rows: list[tuple[Cell, ...]] = field(default_factory=list)
    mcnemar_rows: list[tuple[Cell, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reports: dict[tuple[str, str, str], stats.VerifierReport] = field(default_factory=dict)
    # (system, level) -> the predictions on the level's units, for McNemar
    aligned: dict[tuple[str, str], list[str | None]] = field(default_factory=dict)


def verifier_sections(data: ReportData) -> list[Section]:
    project = data.project
    systems_of, verdicts = data.verdicts()
    if not verdicts:
        return []
    specs = [s for s in kinds.all_specs() if s.verdict_field]
    levels = [(spec, _level(data, spec)) for spec in specs]
    of_system: dict[int, Labels] = defaultdict(lambda: {Claim: {}, Segment: {}})
    for system, claim, segment, _, label in verdicts:
        if claim is not None:
            of_system[system][Claim][claim] = label
        elif segment is not None:
            of_system[system][Segment][segment] = label
    by_system = {systems_of[pk]: labels for pk, labels in of_system.items()}
    if not any(level.golds for _, level in levels):
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
    scores = _Scores()
    for spec, level in levels:
        if not level.golds:
            continue
        modes: dict[str, dict[str, str] | None] = (
            rules if spec.verdict_level == "claim" else dict.fromkeys(spec.verdict_modes)
        )
        for name, kind in systems:
            _score_system(scores, spec, name, kind, level, by_system[(name, kind)], modes)
        _mcnemar_rows(scores, spec.verdict_level, systems, level.reference, modes)
    _add_texts(
        scores.disagreement_rows, {s.verdict_level: s.verdict_target for s in specs}, project
    )
    notes = _verifier_notes(rules) + scores.notes
    return [
        Section(
            "verifiers",
            "Verifiers against human labels",
            tuple(notes),
            tuple(_verifier_tables(scores)),
            data=scores.reports,
        )
    ]


def _level(data: ReportData, spec: ReportKind) -> _Level:
    """The kind's units with a human gold label that verdicts can be compared with."""
    # the targets' columns (Target: gold, target, domain, document)
    golds, ids, domains, documents = [
        list(c) for c in zip(*data.verdict_targets(spec), strict=True)
    ] or ([[], [], [], []])
    # read as verdict labels once per distinct value
    reference = cast("list[str | None]", map_each([g.value for g in golds], spec.as_verdict))
    return _Level(ids, domains, golds, documents, reference, {})


def _score_system(
    scores: _Scores,
    spec: ReportKind,
    name: str,
    kind: str,
    units: _Level,
    labels: Labels,
    modes: dict[str, dict[str, str] | None],
) -> None:
    """One system against the human gold labels of one level, in every scoring mode."""
    level, target = spec.verdict_level, spec.verdict_target
    ref_raw = units.reference
    mine = labels.get(target, {})
    # read like the gold labels ("true"/"false" on a segment: supported/unsupported), once
    # per distinct label
    pred = cast("list[str | None]", map_each(list(map(mine.get, units.targets)), spec.as_verdict))
    if pred.count(None) == len(pred):
        return
    scores.aligned[(name, level)] = pred
    for mode, rule in modes.items():
        try:
            rep = stats.verifier_vs_reference(
                y_true=ref_raw,
                y_pred=pred,
                collapse=rule,  # type: ignore[arg-type]
                mode=None if rule is not None else mode,  # type: ignore[arg-type]
            )
        except ValueError as e:
            scores.notes.append(f"{name}: no {mode} scores ({e}).")
            continue
        scores.reports[(name, level, mode)] = rep
        scores.score_rows.append(_score_row(name, kind, level, mode, rep))
        scores.class_rows += [
            (name, level, mode, c.label, c.precision, c.recall, c.f1, c.support, c.predicted)  # type: ignore[misc]
            for c in rep.per_class
        ]
        scores.confusion_tables.append(
            Table(
                f"confusion-{slugify(name)}-{level}-{mode}",
                f"{name}: confusion matrix ({level}, {mode}); rows human, columns system",
                ("human \\ system", *rep.labels),  # type: ignore[arg-type]
                tuple((label, *row) for label, row in zip(rep.labels, rep.confusion, strict=True)),  # type: ignore[arg-type]
            )
        )
        for d in rep.disagreements:
            i = cast("int", d.unit)  # its place in the columns
            g, claim_or_segment = units.golds[i], units.targets[i]
            if (votes := units.votes.get(i)) is None:
                votes = units.votes[i] = " ".join([f"{k}:{v}" for k, v in g.votes.items()])
            scores.disagreement_rows.append(
                (  # type: ignore[arg-type]
                    name,
                    level,
                    mode,
                    g.item,
                    g.unit,
                    units.domains[i],
                    claim_or_segment,
                    d.reference,
                    d.predicted,
                    mine.get(claim_or_segment),
                    g.value,
                    votes,
                    g.provenance,
                )
            )
    if target is not Claim:  # segments add up to a response (FELM)
        response = _response_level(units.documents, pred, ref_raw)
        scores.reports[(name, "response", "binary")] = response
        scores.score_rows.append(_score_row(name, kind, "response", "binary", response))


def _mcnemar_rows(
    scores: _Scores,
    level: str,
    systems: list[tuple[str, str]],
    ref_raw: list[str | None],
    modes: dict[str, dict[str, str] | None],
) -> None:
    """McNemar between every two systems on the units both labelled."""
    named = [n for n, _ in systems if (n, level) in scores.aligned]
    for a, b in combinations(named, 2):
        for mode, rule in modes.items():
            if (a, level, mode) not in scores.reports or (b, level, mode) not in scores.reports:
                continue
            m = stats.mcnemar_test(
                scores.aligned[(a, level)],
                scores.aligned[(b, level)],
                ref_raw,
                collapse=rule,  # type: ignore[arg-type]
                mode="binary" if rule is not None else mode,  # type: ignore[arg-type]
            )
            scores.mcnemar_rows.append(
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


SCORE_COLUMNS = (
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
)

CLASS_COLUMNS = (
    "system",
    "level",
    "mode",
    "class",
    "precision",
    "recall",
    "F1",
    "support",
    "predicted",
)

MCNEMAR_COLUMNS = (
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
)

DISAGREEMENT_COLUMNS = (
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
)


def _verifier_tables(scores: _Scores) -> list[Table]:
    mcnemar = Table(
        "mcnemar",
        "McNemar's test between systems on the same units",
        MCNEMAR_COLUMNS,
        tuple(scores.mcnemar_rows),
    )
    return [
        Table(
            "verifier-scores",
            "Verifiers against human gold labels (VeriScore Table 11)",
            SCORE_COLUMNS,
            tuple(scores.score_rows),
        ),
        Table(
            "verifier-classes",
            "Precision, recall and F1 per class",
            CLASS_COLUMNS,
            tuple(scores.class_rows),
        ),
        *([mcnemar] if scores.mcnemar_rows else []),
        *scores.confusion_tables,
        Table(
            "verifier-disagreements",
            "Units where a system and the human gold label disagree",
            DISAGREEMENT_COLUMNS,
            tuple(scores.disagreement_rows),
        ),
    ]


def _verifier_notes(rules: dict[str, dict[str, str] | None]) -> list[str]:
    notes = [
        "Binary mode: contradicted and inconclusive count as unsupported. Overall F1 "
        "is the macro mean over classes; VeriScore's published 'Overall F1' equals its "
        "supported F1. Segment labels true/false read as supported/unsupported; a "
        "response is unsupported when any of its segments is (FELM)."
    ]
    if rules is not _DEFAULT_RULES:
        notes.append(
            "Claim labels scored under the project's collapse rules: "
            + "; ".join(
                f"{name}: " + (", ".join(f"{k} -> {v}" for k, v in rule.items()) or "as labelled")
                for name, rule in rules.items()
                if rule is not None
            )
            + ".",
        )
    return notes


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
    documents: list[int], pred: list[str | None], ref: list[str | None]
) -> stats.VerifierReport:
    """The units' documents' labels (FELM: unsupported when any segment is), where the
    system labelled at least one unit."""
    labelled = [p is not None for p in pred]
    docs = list(compress(documents, labelled))
    pred_resp = stats.response_labels(list(compress(pred, labelled)), docs)
    ref_resp = stats.response_labels(list(compress(ref, labelled)), docs)
    keys = list(ref_resp)
    return stats.verifier_vs_reference(
        y_true=[ref_resp[k] for k in keys],
        y_pred=[pred_resp[k] for k in keys],
        mode="binary",
        units=[f"document {k}" for k in keys],
    )


# a target model -> its project, for the texts of many disagreements (a join: not
# thousands of ids in the query)
_PROJECT_OF = {Claim: "claim_list__document__project", Segment: "document__project"}
MANY_IDS = 1000


def _add_texts(rows: list[tuple[Cell, ...]], models: dict[str, Any], project: Project) -> None:
    """Each disagreement row gets the text of its claim or segment (shortened to 300
    characters, once per claim or segment)."""
    texts: dict[Any, dict[Any, str]] = {}  # level -> claim or segment id -> its text
    for level, model in models.items():
        pks = {row[6] for row in rows if row[1] == level}
        if not pks:
            continue
        if len(pks) > MANY_IDS and model in _PROJECT_OF:
            found = model.objects.filter(**{_PROJECT_OF[model]: project})
        else:
            found = model.objects.filter(pk__in=pks)
        texts[level] = {
            pk: text if len(text) <= 300 else text[:297] + "..."
            for pk, text in fetch(found.order_by().values_list("pk", "text"))  # a lookup
            if pk in pks
        }
    rows[:] = [(*row, texts[row[1]].get(row[6], "")) for row in rows]


def slugify(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-") or "system"
