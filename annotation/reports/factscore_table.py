"""The report table a FActScore user reports (Min et al., 2023, Table 1): per source model,
responses, % responding, atomic facts per responding response, and FActScore.

It is computed from a *verdict set* on atomic facts: FActScore's human labels
(factscore-human-labels), a verifier's verdicts, or any other set of claim labels.
FActScore's human-label rule: per responding response, S / (S + NS + IR + the model's
atomic facts of sentences marked is-relevant: false, which have no human facts),
averaged over responding responses.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models import QuerySet

from pipeline.dataformats.common import SOURCE
from pipeline.dataformats.factscore import MODEL

from ..answers import fetch
from ..gold import Gold
from ..kinds import fact_verdicts
from ..models import Claim, ClaimList, Document, Project
from .queries import Verdicts, read_verdicts

SUPPORTED, NOT_SUPPORTED, IRRELEVANT = "S", "NS", "IR"
_LABELS = {
    "s": SUPPORTED,
    "supported": SUPPORTED,
    "true": SUPPORTED,
    "ns": NOT_SUPPORTED,
    "unsupported": NOT_SUPPORTED,
    "not supported": NOT_SUPPORTED,
    "contradicted": NOT_SUPPORTED,
    "inconclusive": NOT_SUPPORTED,
    "inconclusive-not-enough": NOT_SUPPORTED,
    "inconclusive-conflicting": NOT_SUPPORTED,
    "false": NOT_SUPPORTED,
    "ir": IRRELEVANT,
    "irrelevant": IRRELEVANT,
}
COLUMNS = (
    "verdict set",
    "facts from",
    "source model",
    "responses",
    "% responding",
    "labelled responses",
    "facts per responding response",
    "FActScore",
)


@dataclass(frozen=True)
class VerdictSet:
    """Labels on atomic facts: claim id -> S, NS or IR."""

    name: str
    labels: dict[int, str]


@functools.lru_cache(maxsize=4096)  # a few spellings, read once per verdict
def fact_label(label: str) -> str | None:
    return _LABELS.get(label.strip().rstrip(".").lower())


def system_verdict_sets(project: Project, verdicts: Verdicts | None = None) -> list[VerdictSet]:
    """One set per reference or verifier system with labels on claims (`verdicts`: the
    project's, when the caller has them read)."""
    systems, rows = verdicts or read_verdicts(project)
    sets: dict[str, dict[int, str]] = defaultdict(dict)
    for system, claim, _, _, label in rows:
        if claim is not None and (value := fact_label(label)) is not None:
            sets[systems[system][0]][claim] = value
    return [VerdictSet(name, labels) for name, labels in sorted(sets.items())]


GOLD = "annotators' gold labels"


def gold_verdict_set(
    project: Project, golds_of: Mapping[str, list[Gold]] | None = None
) -> VerdictSet | None:
    """The annotators' gold labels of atomic-fact items, as one more verdict set; from
    all submitted answers, whatever the report's filters (`golds_of`: the golds per kind
    of an unfiltered report, which are those; None: they are queried)."""
    labels = {
        claim: value
        for claim, label in fact_verdicts(project, golds_of).items()
        if (value := fact_label(label)) is not None
    }
    return VerdictSet(GOLD, labels) if labels else None


@dataclass(frozen=True)
class Row:
    verdict_set: str
    facts_from: str
    source_model: str
    responses: int
    responding: int
    labelled: int  # responding responses the set labels: the ones scored
    facts_per_response: float | None
    factscore: float | None  # percent

    def cells(self) -> tuple[str, str, str, int, float, int, float | None, float | None]:
        return (
            self.verdict_set,
            self.facts_from,
            self.source_model,
            self.responses,
            100 * self.responding / self.responses,
            self.labelled,
            self.facts_per_response,
            self.factscore,
        )


def factscore_rows_of(
    project: Project,
    verdict_sets: list[VerdictSet],
    documents: Iterable[int] | QuerySet[Document] | None = None,
) -> list[Row]:
    """Rows per (verdict set, claim-list system, source model) of the lists each set
    labels, the project's claims, claim lists and irrelevant facts queried once for all.

    `responses` and `% responding` describe the data; facts per response and FActScore
    are over the responding responses the set labels (at least one of their facts, or,
    under the human-label rule, facts of sentences marked irrelevant): a set that labels
    a few responses (the annotators' gold labels part way through) scores only those,
    and a source model none of whose responses it labels gets no row."""
    labelled = set().union(*(vs.labels for vs in verdict_sets))
    # the project's labelled claims: their list and its system (a join, not thousands of
    # ids in the query; no sort: a lookup)
    list_of: dict[int, int] = {}
    system_of: dict[int, int] = {}
    for pk, list_id, system in fetch(
        Claim.objects.filter(claim_list__document__project=project)
        .order_by()
        .values_list("pk", "claim_list_id", "claim_list__system_id")
    ):
        if pk in labelled:
            list_of[pk] = list_id
            system_of[list_id] = system
    counts_of = []
    for verdict_set in verdict_sets:
        counts: dict[int, Counter[str]] = defaultdict(Counter)
        for claim, label in verdict_set.labels.items():
            if claim in list_of:
                counts[list_of[claim]][label] += 1
        counts_of.append((verdict_set, counts, {system_of[pk] for pk in counts}))
    # the lists of the systems a set labels (a set reads every list of its systems)
    lists = ClaimList.objects.filter(
        document__project=project, system__in=sorted(set().union(*(s for *_, s in counts_of)))
    )
    if documents is not None:
        lists = lists.filter(document__in=documents)
    found = fetch(  # abstained: SQLite's 0 / 1, read only as true or false
        lists.values_list(
            "pk", "document_id", "system_id", "system__name", "document__source_model", "abstained"
        )
    )
    irrelevant = _irrelevant_model_facts(project)
    rows = []
    for verdict_set, counts, systems in counts_of:
        info = [(pk, doc, *rest) for pk, doc, system, *rest in found if system in systems]
        rows += _rows(verdict_set, counts, info, irrelevant)
    return rows


def _rows(
    verdict_set: VerdictSet,
    counts: dict[int, Counter[str]],
    info: list[tuple[int, int, str, str, bool]],
    irrelevant: dict[int, int],
) -> list[Row]:
    # A response whose every sentence was marked irrelevant has no human facts to label; it
    # is scored (0) only by a set that labels every other responding response of its system.
    labels_all = all(
        pk in counts or irrelevant.get(doc)
        for pk, doc, name, _, abstained in info
        if not abstained and name != MODEL
    )
    groups: dict[tuple[str, str], list[tuple[int, float | None]]] = defaultdict(list)
    totals: dict[tuple[str, str], int] = defaultdict(int)
    responding: dict[tuple[str, str], int] = defaultdict(int)
    for pk, doc, name, model, abstained in info:
        totals[(name, model)] += 1
        if abstained:
            continue
        responding[(name, model)] += 1
        if pk not in counts and not (name != MODEL and irrelevant.get(doc) and labels_all):
            continue  # the set says nothing about this response
        c = counts[pk]  # S, NS and IR
        n = c.total() + (irrelevant.get(doc, 0) if name != MODEL else 0)
        groups[(name, model)].append((n, c[SUPPORTED] / n if n else None))
    rows = []
    for (name, model), total in sorted(totals.items()):
        scored = groups[(name, model)]
        if not scored:
            continue
        scores = [s for _, s in scored if s is not None]
        rows.append(
            Row(
                verdict_set.name,
                name,
                model,
                total,
                responding[(name, model)],
                len(scored),
                sum(n for n, _ in scored) / len(scored),
                100 * sum(scores) / len(scores) if scores else None,
            )
        )
    return rows


def _irrelevant_model_facts(project: Project) -> dict[int, int]:
    """document id -> the model's atomic facts in its sentences marked is-relevant: false
    (the project's documents: a join, not thousands of ids in the query)."""
    marked: dict[int, set[int]] = {}
    with_source = Document.objects.filter(project=project, metadata__has_key=SOURCE)
    for pk, metadata in with_source.values_list("pk", "metadata"):  # others mark nothing
        source = metadata.get(SOURCE) if isinstance(metadata, dict) else None
        sentences = source.get("annotations") if isinstance(source, dict) else None
        off = {
            i
            for i, s in enumerate(sentences or [])
            if isinstance(s, dict) and s.get("is-relevant") is False
        }
        if off:
            marked[pk] = off
    counts: dict[int, int] = defaultdict(int)
    for doc, index in (
        Claim.objects.filter(claim_list__document__in=with_source, claim_list__system__name=MODEL)
        .order_by()  # counted: no sort
        .values_list("claim_list__document_id", "sentence_index")
    ):
        if doc in marked and index in marked[doc]:
            counts[doc] += 1
    return counts
