"""Report sections comparing metrics with each other (stats.claim_lists and stats.correlation
do the numbers):

- "Extractor against extractor": every two extraction systems on the documents both
  extracted claims from, per sentence when both lists are sentence-aligned, else per
  document; claims per sentence and sentences without a claim per system and domain.
- "Score against score": every two scoring systems (a verifier, an imported reference
  such as FActScore's human labels, or the annotators' gold labels, on one extractor's
  claims; FActScore or F1@K) over the same responses, per example and per system.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from django.db.models import Count

from pipeline.split import sentences_for

from .. import charts, kinds
from ..answers import fetch
from ..models import Claim, ClaimList, Document, Project, SentenceCount, System
from ..stats import Coefficient, claim_lists, correlation, resampling
from .queries import ReportData
from .tables import Cell, Chart, Filters, Section, Table

GOLD_SOURCE = "annotators (gold)"
MAX_SCATTER_CHARTS = 6
MAX_SCATTER_POINTS = 500


def metric_sections(data: ReportData) -> list[Section]:
    return [s for s in (_extraction_section(data), _score_section(data)) if s]


# --------------------------------------------------------------------------- extraction


def _ci(e: Coefficient) -> tuple[Cell, Cell, Cell]:
    return e.value, e.ci_low, e.ci_high


@dataclass(frozen=True)
class _Extractions:
    """The extractors' claim lists a report compares (the section's query)."""

    claims: dict[int, list[tuple[str, int | None]]]  # list -> (text, sentence index)
    by_doc: dict[int, dict[str, int]]  # document -> system -> list (abstentions left out)
    domains: dict[int, str]  # document -> domain
    n_sentences: dict[int, int]  # document -> sentences
    n_abstained: int

    @property
    def names(self) -> list[str]:
        return sorted({name for systems in self.by_doc.values() for name in systems})

    @functools.cached_property
    def unaligned(self) -> set[int]:
        """The lists with a claim that gives no sentence."""
        return {pk for pk, claims in self.claims.items() if any(s is None for _, s in claims)}

    def aligned(self, list_id: int) -> bool:
        return list_id not in self.unaligned


def _extractions(project: Project, filters: Filters) -> _Extractions | None:
    lists = ClaimList.objects.filter(document__project=project, system__kind=System.EXTRACTOR)
    if filters.domains:
        lists = lists.filter(document__domain__in=filters.domains)
    info = {
        pk: (doc, name, bool(abstained))
        for pk, doc, name, abstained in fetch(
            lists.values_list("pk", "document_id", "system__name", "abstained")
        )
    }
    if not info:
        return None
    claims: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
    for list_id, text, sentence in fetch(
        Claim.objects.filter(claim_list__in=lists)
        .order_by("claim_list_id", "position")
        .values_list("claim_list_id", "text", "sentence_index")
    ):
        claims[list_id].append((text, sentence))
    by_doc: dict[int, dict[str, int]] = defaultdict(dict)
    for pk, (doc, name, abstained) in info.items():
        if not abstained:
            by_doc[doc][name] = pk
    documents = {
        pk: (domain, response, question)
        for pk, domain, response, question in fetch(
            # a subquery, not thousands of ids in the query
            Document.objects.filter(
                pk__in=lists.filter(abstained=False).values("document_id")
            ).values_list("pk", "domain", "response", "question")
        )
    }
    # Sentences: the pipeline's splitter (its extraction windows), extended to the
    # highest sentence index a list uses when a list was split differently.
    counts = sentence_counts(project, {doc: (r, q) for doc, (_, r, q) in documents.items()})
    n_sentences: dict[int, int] = {}
    for doc, systems in by_doc.items():
        highest = max(
            (s for pk in systems.values() for _, s in claims[pk] if s is not None), default=-1
        )
        n_sentences[doc] = max(counts[doc], highest + 1)
    return _Extractions(
        claims=claims,
        by_doc=by_doc,
        domains={doc: domain for doc, (domain, _, _) in documents.items()},
        n_sentences=n_sentences,
        n_abstained=sum(1 for _, _, abstained in info.values() if abstained),
    )


def _similarities(
    ex: _Extractions, *, bootstrap: int, seed: int, draws: resampling.Draws
) -> dict[tuple[str, str, str], claim_lists.ListSimilarity]:
    """(system A, system B, unit) -> the similarity of their claim lists, per sentence when
    both lists give each claim's sentence, else per document."""
    found = {}
    sentences: dict[int, dict[int | None, tuple[str, ...]]] = {}  # list -> sentence -> claims

    def of_sentence(list_id: int) -> dict[int | None, tuple[str, ...]]:
        if list_id not in sentences:
            grouped: dict[int | None, list[str]] = defaultdict(list)
            for t, s in ex.claims[list_id]:
                grouped[s].append(t)
            sentences[list_id] = {s: tuple(texts) for s, texts in grouped.items()}
        return sentences[list_id]

    for a, b in itertools.combinations(ex.names, 2):
        units: dict[str, list[claim_lists.ListPair]] = {"sentence": [], "document": []}
        for doc, systems in ex.by_doc.items():
            if a not in systems or b not in systems:
                continue
            la, lb = ex.claims[systems[a]], ex.claims[systems[b]]
            if ex.aligned(systems[a]) and ex.aligned(systems[b]):
                sa, sb = of_sentence(systems[a]), of_sentence(systems[b])
                for i in range(ex.n_sentences[doc]):
                    units["sentence"].append(
                        claim_lists.ListPair(doc, sa.get(i, ()), sb.get(i, ()))
                    )
            else:
                units["document"].append(
                    claim_lists.ListPair(doc, tuple(t for t, _ in la), tuple(t for t, _ in lb))
                )
        for level, pairs in units.items():
            if pairs:
                found[(a, b, level)] = claim_lists.list_similarity(
                    pairs, bootstrap=bootstrap, seed=seed, draws=draws
                )
    return found


def _densities(
    ex: _Extractions, *, bootstrap: int, seed: int, draws: resampling.Draws
) -> dict[tuple[str, str | None], claim_lists.ClaimDensity]:
    """(system, domain or None for all) -> claims per sentence."""
    found = {}
    for name in ex.names:
        responses = []
        for doc, systems in ex.by_doc.items():
            if name not in systems:
                continue
            lst = ex.claims[systems[name]]
            empty = None
            if ex.aligned(systems[name]):
                empty = ex.n_sentences[doc] - len({s for _, s in lst})
            responses.append(
                claim_lists.ResponseExtraction(
                    doc, ex.domains[doc], len(lst), ex.n_sentences[doc], empty
                )
            )
        for d in claim_lists.claim_density(responses, bootstrap=bootstrap, seed=seed, draws=draws):
            found[(name, d.domain)] = d
    return found


def _extraction_section(data: ReportData) -> Section | None:
    bootstrap, seed = data.bootstrap, data.seed
    ex = _extractions(data.project, data.filters)
    if ex is None:
        return None
    names = ex.names
    # the resamples of the same documents (every pair, every extractor) are drawn once
    draws: resampling.Draws = {}
    similarities = _similarities(ex, bootstrap=bootstrap, seed=seed, draws=draws)
    densities = _densities(ex, bootstrap=bootstrap, seed=seed, draws=draws)
    pair_table = _similarity_table(similarities)
    tables = [pair_table] if pair_table else []
    tables.append(_density_table(densities))
    notes = [
        "Sentences are counted with the pipeline's splitter (pysbd, the sentences its "
        "extraction windows are built on), extended to the highest sentence index a list uses. "
        f"95 % bootstrap percentile intervals from {bootstrap} resamples of documents "
        f"(seed {seed}); a document's sentences stay together."
        if bootstrap
        else "No confidence intervals (bootstrap=0).",
        "ROUGE-L F1 is rouge-score's rougeL (no stemming) on the newline-joined lists.",
    ]
    if ex.n_abstained:
        notes.append(f"{ex.n_abstained} abstained claim list(s) are left out.")
    if len(names) < 2:
        notes.append("Only one extraction system: nothing to compare it with yet.")
    return Section(
        "extractor-vs-extractor",
        "Extractor against extractor",
        tuple(notes),
        tuple(tables),
        data={"pairs": similarities, "density": densities},
    )


def _similarity_table(
    similarities: dict[tuple[str, str, str], claim_lists.ListSimilarity],
) -> Table | None:
    """Exact match and ROUGE-L of each pair of extractors (None: no pair)."""
    pair_rows: list[tuple[Cell, ...]] = [
        (
            a,
            b,
            level,
            r.documents,
            r.units,
            r.both_empty,
            *_ci(r.exact_match),
            r.exact_match_with_claims.value,
            *_ci(r.rouge_l),
            r.a_claims_per_unit.value,
            r.b_claims_per_unit.value,
            _pct(r.a_empty_share.value),
            _pct(r.b_empty_share.value),
        )
        for (a, b, level), r in similarities.items()
    ]
    if not pair_rows:
        return None
    return Table(
        "extractor-similarity",
        "Claim lists of two extractors (VeriScore App. F: exact match and ROUGE-L)",
        (
            "system A",
            "system B",
            "unit",
            "documents",
            "units",
            "units both empty",
            "exact match",
            "EM CI low",
            "EM CI high",
            "exact match, units with a claim",
            "ROUGE-L F1",
            "ROUGE-L CI low",
            "ROUGE-L CI high",
            "A claims per unit",
            "B claims per unit",
            "A units with no claim %",
            "B units with no claim %",
        ),
        tuple(pair_rows),
        note="unit = sentence when both lists give each claim's sentence, else document "
        "(a flat list). Exact match and ROUGE-L F1 are means over units; an empty "
        'list reads as VeriScore\'s "No verifiable claim.", so two empty lists match.',
    )


def _density_table(densities: dict[tuple[str, str | None], claim_lists.ClaimDensity]) -> Table:
    """Claims per sentence per extractor and domain."""
    density_rows: list[tuple[Cell, ...]] = [
        (
            name,
            "all" if d.domain is None else d.domain or "(no domain)",
            d.responses,
            d.sentences,
            d.claims,
            *_ci(d.ratio),
            d.aligned_responses,
            _pct(d.empty_share.value),
            _pct(d.empty_share.ci_low),
            _pct(d.empty_share.ci_high),
        )
        for (name, _), d in densities.items()
    ]
    return Table(
        "claims-per-sentence",
        "Claims per sentence per extractor and domain (VeriScore Table 1, VerRatio)",
        (
            "system",
            "domain",
            "responses",
            "sentences",
            "claims",
            "claims per sentence",
            "CI low",
            "CI high",
            "sentence-aligned responses",
            "sentences with no claim %",
            "% CI low",
            "% CI high",
        ),
        tuple(density_rows),
        note="Claims per sentence is the mean over responses of claims / sentences; sentences "
        "with no claim are counted on responses whose list gives each claim's sentence.",
    )


SPLITTER = "pysbd"  # the pipeline's sentence splitter, the key of stored counts


def sentence_counts(project: Project, documents: dict[int, tuple[str, str]]) -> dict[int, int]:
    """document -> how many sentences the pipeline's splitter finds in (response,
    question). pysbd takes about a millisecond a sentence: a count is stored
    (SentenceCount, keyed by the splitter) the first time a report needs it, or after an
    import by its background task (store_sentence_counts), and counted again only when
    the document's text changed (its digest)."""
    digests = {doc: _digest(response, question) for doc, (response, question) in documents.items()}
    counts: dict[int, int] = {}
    for doc, digest, count in SentenceCount.objects.filter(
        splitter=SPLITTER, document__project=project
    ).values_list("document_id", "digest", "count"):
        if digests.get(doc) == digest:
            counts[doc] = count
    missing = _count_and_store(
        (doc, *documents[doc], digests[doc]) for doc in documents if doc not in counts
    )
    return counts | {row.document_id: row.count for row in missing}


def _digest(response: str, question: str) -> str:
    return hashlib.sha1(f"{question}\x1f{response}".encode()).hexdigest()


def _count_and_store(documents: Iterable[tuple[int, str, str, str]]) -> list[SentenceCount]:
    """Count (document, response, question, digest)s and store the counts (a count
    stored meanwhile by someone else is replaced)."""
    rows = [
        SentenceCount(
            document_id=doc,
            splitter=SPLITTER,
            digest=digest,
            count=len(sentences_for(response, question)),
        )
        for doc, response, question, digest in documents
    ]
    SentenceCount.objects.bulk_create(
        rows,
        batch_size=5000,
        update_conflicts=True,
        unique_fields=["document", "splitter"],
        update_fields=["digest", "count"],
    )
    return rows


def store_sentence_counts(project_id: int, chunk: int = 1000) -> int:
    """Count and store the sentences of the project's documents that have no count under
    SPLITTER (an import enqueues this after its commit, so that the first report does not
    split them: pysbd costs far more CPU than the import itself, bench/RESULTS.md).
    `chunk` documents at a time, each in its own transaction; how many were counted. (A
    document whose text changed since its count is counted by the report.)"""
    done, after = 0, 0
    while True:
        batch = list(
            Document.objects.filter(project_id=project_id, pk__gt=after)
            .exclude(sentence_counts__splitter=SPLITTER)
            .order_by("pk")
            .values_list("pk", "response", "question")[:chunk]
        )
        if not batch:
            return done
        _count_and_store((pk, r, q, _digest(r, q)) for pk, r, q in batch)
        done += len(batch)
        after = batch[-1][0]


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class _Scored:
    """Every label source's labels on every extractor's claims, per response (the query)."""

    by_source: dict[tuple[str, str], list[correlation.ResponseLabels]]  # (source, extractor)
    unlabelled: dict[tuple[str, str], int]  # (source, extractor) -> claims with no label
    model_of: dict[Hashable, str]  # document -> source model
    model_domain: dict[Hashable, str]  # document -> "source model / domain"


def _scored(data: ReportData) -> _Scored | None:
    project, filters = data.project, data.filters
    # (label source, claim list) -> claim -> label: the verifiers' and references' verdicts
    # on claims (read once per report; the domain filter applies below: only the lists of
    # the filtered documents are scored)
    systems, rows = data.verdicts()
    labels: dict[tuple[str, int], dict[int, str]] = defaultdict(dict)
    for system, claim, _, list_id, label in rows:
        if claim is not None and list_id is not None:
            labels[(systems[system][0], list_id)][claim] = label
    gold_claims = _gold_labels(project, data)
    for (claim, list_id), label in gold_claims.items():
        labels[(GOLD_SOURCE, list_id)][claim] = label
    if not labels:
        return None
    # the project's lists with a claim (a labelled list has one), each with its claims
    # counted, in one query grouped by list (a join and a count in SQL, not the ids of
    # every labelled list in the query), kept for the lists with a label
    claims = Claim.objects.filter(
        claim_list__document__project=project, claim_list__abstained=False
    )
    if filters.domains:
        claims = claims.filter(claim_list__document__domain__in=filters.domains)
    labelled = {list_id for _, list_id in labels}
    info: dict[int, tuple[int, str, str, str]] = {}
    sizes: dict[int, int] = {}
    for pk, doc, model, domain, extractor, n in fetch(
        claims.values("claim_list_id")
        .annotate(n=Count("id"))
        .values_list(
            "claim_list_id",
            "claim_list__document_id",
            "claim_list__document__source_model",
            "claim_list__document__domain",
            "claim_list__system__name",
            "n",
        )
    ):
        if pk in labelled:
            info[pk] = (doc, model or "(unknown model)", domain, extractor)
            sizes[pk] = n

    by_source: dict[tuple[str, str], list[correlation.ResponseLabels]] = defaultdict(list)
    unlabelled: dict[tuple[str, str], int] = defaultdict(int)
    for (source, list_id), claim_labels in labels.items():
        if list_id not in info:
            continue
        doc, model, domain, extractor = info[list_id]
        missing = sizes[list_id] - len(claim_labels)
        if source == GOLD_SOURCE and missing:
            continue  # annotators label a sample of claims: a response needs all of its own
        unlabelled[(source, extractor)] += missing
        by_source[(source, extractor)].append(
            correlation.ResponseLabels(
                doc, model, domain, sizes[list_id], tuple(claim_labels.values())
            )
        )
    return _Scored(
        by_source=by_source,
        unlabelled=unlabelled,
        model_of={doc: model for doc, model, _, _ in info.values()},
        model_domain={
            doc: f"{model} / {domain or '(no domain)'}" for doc, model, domain, _ in info.values()
        },
    )


def _correlations(
    scores: dict[str, dict[Hashable, float]], scored: _Scored, *, bootstrap: int, seed: int
) -> dict[tuple[str, str], list[correlation.Correlation]]:
    """(score A, score B) -> their correlations per example, per source model and per
    source model and domain; only pairs that share a response."""
    pairings: dict[tuple[str, str], list[correlation.Pairing]] = {}
    draws: correlation.SystemDraws = {}  # shared resamples
    table = correlation.ScoreTable(scores)
    system_levels = [  # each response's system, per level
        (table.systems(scored.model_of), "system: source model"),
        (table.systems(scored.model_domain), "system: source model and domain"),
    ]
    pairs = [
        (a, b)
        for a, b in itertools.combinations(sorted(scores), 2)
        if table.present[b][table.order[a]].any()
    ]
    examples = correlation.example_pairings(table, pairs, bootstrap=bootstrap, seed=seed)
    for (a, b), example in zip(pairs, examples, strict=True):
        pairings[(a, b)] = [
            example,
            *(
                correlation.system_pairing(
                    table, a, b, systems, level=level, bootstrap=bootstrap, seed=seed, draws=draws
                )
                for systems, level in system_levels
            ),
        ]
    # scipy's figures and the intervals of every pair at once (the same values)
    found = iter(correlation.correlate_many([p for levels in pairings.values() for p in levels]))
    return {pair: [next(found) for _ in levels] for pair, levels in pairings.items()}


def _scatter_charts(
    correlations: dict[tuple[str, str], list[correlation.Correlation]], *, seed: int
) -> list[Chart]:
    chart_list: list[Chart] = []
    for (a, b), levels in correlations.items():
        if levels[0].undefined_reason or len(chart_list) >= MAX_SCATTER_CHARTS:
            continue
        points = [(p[1], p[2]) for p in levels[0].points]
        title = f"{a} against {b}"
        if len(points) > MAX_SCATTER_POINTS:  # an inline SVG of every point gets heavy
            points = random.Random(seed).sample(points, MAX_SCATTER_POINTS)
            title += f" ({MAX_SCATTER_POINTS} of {len(levels[0].points)} responses drawn)"
        chart_list.append(
            Chart(title, charts.scatter(points, levels[1].points, xlabel=a, ylabel=b))
        )
    return chart_list


def _score_section(data: ReportData) -> Section | None:
    bootstrap, seed, k_rule = data.bootstrap, data.seed, data.k_rule
    scored = _scored(data)
    if scored is None:
        return None
    scores, system_rows = _scorings(scored, k_rule=k_rule)
    if not scores:
        return None
    per_model_rows = _per_model_rows(scores, scored)
    correlations = _correlations(scores, scored, bootstrap=bootstrap, seed=seed)
    found = {(a, b, c.level): c for (a, b), levels in correlations.items() for c in levels}
    corr_table = _correlation_table(correlations)
    chart_list = _scatter_charts(correlations, seed=seed) if data.with_charts else []
    tables = [
        Table(
            "score-systems",
            "Scoring systems: one metric on one label source's verdicts on one extractor's claims",
            (
                "score",
                "metric",
                "labels from",
                "claims from",
                "responses scored",
                "unlabelled claims",
                "mean score",
            ),
            tuple(system_rows),
        ),
        Table(
            "score-per-model",
            "Mean score per source model (and domain)",
            ("score", "grouping", "system", "responses", "mean score"),
            tuple(per_model_rows),
        ),
    ]
    if corr_table:
        tables.insert(1, corr_table)
    notes = [
        "FActScore = supported / (supported + not supported) per response (irrelevant facts "
        "left out); F1@K as in the pipeline section (K per domain is the "
        f"{k_rule} median claim count of the responses scored). Contradicted and inconclusive "
        "count as not supported. Claims without a label are left out of a response's score "
        "and counted under 'unlabelled claims'; abstained responses are left out.",
        f"'{GOLD_SOURCE}' are the annotators' gold claim labels (within the filters); a "
        "response is scored from them only when all of its claims have one.",
        f"95 % bootstrap percentile intervals from {bootstrap} resamples (seed {seed}): "
        "responses at the example level, responses within each system at the system level."
        if bootstrap
        else "No confidence intervals (bootstrap=0).",
    ]
    if not corr_table:
        notes.append("No two scoring systems share a response yet: nothing to correlate.")
    return Section(
        "score-vs-score",
        "Score against score",
        tuple(notes),
        tuple(tables),
        tuple(chart_list),
        data=found,
    )


def _scorings(
    scored: _Scored, *, k_rule: str
) -> tuple[dict[str, dict[Hashable, float]], list[tuple[Cell, ...]]]:
    """Each scoring system's scores per response (a metric on one label source's
    verdicts on one extractor's claims), and its row of the systems table."""
    scores: dict[str, dict[Hashable, float]] = {}
    system_rows: list[tuple[Cell, ...]] = []
    for (source, extractor), responses in sorted(scored.by_source.items()):
        for metric, values in correlation.response_scores(responses, k_rule=k_rule).items():
            if not values:
                continue
            name = f"{metric}: {source} on {extractor}"
            scores[name] = values
            system_rows.append(
                (
                    name,
                    metric,
                    source,
                    extractor,
                    len(values),
                    scored.unlabelled[(source, extractor)],
                    sum(values.values()) / len(values),
                )
            )
    return scores, system_rows


def _per_model_rows(
    scores: dict[str, dict[Hashable, float]], scored: _Scored
) -> list[tuple[Cell, ...]]:
    """Each scoring's mean per source model, and per source model and domain."""
    per_model_rows: list[tuple[Cell, ...]] = []
    for name, values in scores.items():
        for label, groups in (("all", scored.model_of), ("by domain", scored.model_domain)):
            grouped: dict[str, list[float]] = defaultdict(list)
            for d, v in values.items():
                grouped[groups[d]].append(v)
            for system, vs in sorted(grouped.items()):
                per_model_rows.append((name, label, system, len(vs), sum(vs) / len(vs)))
    return per_model_rows


def _correlation_table(
    correlations: dict[tuple[str, str], list[correlation.Correlation]],
) -> Table | None:
    """Score against score, each pair at each level (None: no pair shares a response)."""
    corr_rows: list[tuple[Cell, ...]] = [
        (
            a,
            b,
            c.level,
            c.n,
            *_coefficient(c.pearson),
            *_coefficient(c.spearman),
            *_coefficient(c.kendall),
            c.undefined_reason or _notes(c),
        )
        for (a, b), levels in correlations.items()
        for c in levels
    ]
    if not corr_rows:
        return None
    return Table(
        "score-correlations",
        "Score against score: Pearson, Spearman and Kendall correlation per example and per system",
        (
            "score A",
            "score B",
            "level",
            "n",
            "Pearson r",
            "r CI low",
            "r CI high",
            "r p-value",
            "Spearman rho",
            "rho CI low",
            "rho CI high",
            "rho p-value",
            "Kendall tau",
            "tau CI low",
            "tau CI high",
            "tau p-value",
            "note",
        ),
        tuple(corr_rows),
        note="n counts responses (example level) or systems; a system's score is the mean "
        "over its responses that both scores scored.",
    )


def _coefficient(c: correlation.CorrelationCoefficient) -> tuple[Cell, Cell, Cell, Cell]:
    return c.value, c.ci_low, c.ci_high, c.p_value


def _notes(c: correlation.Correlation) -> str:
    return "; ".join(
        f"{name}: {coef.note}"
        for name, coef in (("Pearson", c.pearson), ("Spearman", c.spearman), ("Kendall", c.kendall))
        if coef.note
    )


def _gold_labels(project: Project, data: ReportData) -> dict[tuple[int, int], str]:
    """(claim, claim list) -> the gold label of the claim, from every kind that judges claims
    (verification items, atomic-fact items)."""
    found: dict[int, str] = {}
    for spec in kinds.judging(Claim):
        as_verdict = functools.cache(spec.as_verdict)  # a few distinct values
        for t in data.verdict_targets(spec):  # the verifier section's, read once
            label = as_verdict(t.gold.value) if t.gold.value else None
            if label:
                found.setdefault(t.target, label)
    if not found:
        return {}
    # a join, not ids; no ORDER BY: only a lookup
    claims = Claim.objects.filter(claim_list__document__project=project).order_by()
    lists = dict(fetch(claims.values_list("pk", "claim_list_id")))
    return {(claim, lists[claim]): label for claim, label in found.items() if claim in lists}
