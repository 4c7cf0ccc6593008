"""Pipeline scores (F1@K, VERIScore) and FActScore from verdicts."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Q

from pipeline import score as pipeline_score
from pipeline.types import Claim as PipelineClaim
from pipeline.types import ClaimResult, ResponseResult
from pipeline.types import Verdict as PipelineVerdict

from .. import stats
from ..answers import fetch
from ..models import Claim, ClaimList, System, Verdict
from . import factscore_table
from .queries import ReportData
from .tables import Cell, Section, Table
from .verifiers import slugify

# --------------------------------------------------------------------------- pipeline


_BLANK_CLAIM = PipelineClaim("", 0, "")


def pipeline_section(data: ReportData) -> Section | None:
    project, filters, k_rule = data.project, data.filters, data.k_rule
    systems, rows = data.verdicts()
    verifiers = {pk: name for pk, (name, role) in systems.items() if role == System.VERIFIER}
    lists = ClaimList.objects.filter(document__project=project)
    if filters.domains:
        lists = lists.filter(document__domain__in=filters.domains)
    # the lists scored: those with a verifier's verdict, and abstentions (no claim to verify)
    verified = Verdict.objects.filter(system__in=list(verifiers), claim__isnull=False)
    scored = lists.filter(Q(abstained=True) | Q(pk__in=verified.values("claim__claim_list_id")))
    info = {  # plain tuples from the cursor; SQLite's booleans are 0 / 1
        pk: (external, model, domain, extractor, bool(abstained))
        for pk, external, model, domain, extractor, abstained in fetch(
            scored.values_list(
                "pk",
                "document__external_id",
                "document__source_model",
                "document__domain",
                "system__name",
                "abstained",
            )
        )
    }
    labels: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    read: dict[str | None, str] = {}  # a stored label -> as scored (a few distinct labels)
    for system, _, _, list_id, label in rows:  # a segment verdict has no list
        # a verifier's verdicts on claims of the lists scored (within the domain filter)
        if system not in verifiers or list_id is None or list_id not in info:
            continue
        if label not in read:
            try:
                canonical = stats.normalise_verdict(label)
            except ValueError:
                canonical = None
            read[label] = canonical or "unparsed"
        labels[verifiers[system]][list_id].append(read[label])
    if not labels:
        return None
    sizes = dict(
        fetch(
            Claim.objects.filter(claim_list__in=lists)
            .order_by()
            .values("claim_list_id")
            .annotate(n=Count("id"))
            .values_list("claim_list_id", "n")
        )
    )
    tables: list[Table] = []
    shared: dict[str | None, ClaimResult] = {}  # claim objects, see _response
    scores_of: dict[tuple[str, str], pipeline_score.ScoresTable] = {}
    for verifier in sorted(labels):
        by_extractor: dict[str, list[ResponseResult]] = defaultdict(list)
        seen_extractors = set()
        for list_id, verdict_labels in labels[verifier].items():
            external, model, domain, extractor, abstained = info[list_id]
            seen_extractors.add(extractor)
            by_extractor[extractor].append(
                _response(
                    external,
                    model,
                    domain,
                    abstained,
                    sizes.get(list_id, 0),
                    verdict_labels,
                    extractor,
                    verifier,
                    shared,
                )
            )
        # Abstained responses have no claims to verify but still count as abstentions.
        for list_id, (external, model, domain, extractor, abstained) in info.items():
            if abstained and extractor in seen_extractors and list_id not in labels[verifier]:
                by_extractor[extractor].append(
                    _response(external, model, domain, True, 0, [], extractor, verifier, shared)
                )
        for extractor, results in sorted(by_extractor.items()):
            scores = pipeline_score.score_results(results, k_rule=k_rule)
            scores_of[(verifier, extractor)] = scores
            tables += _score_tables(verifier, extractor, scores)
    return Section(
        "pipeline",
        "Pipeline scores (VERIScore)",
        (
            f"Per response P = S/|C|, R = min(S/K, 1), F1@K; K per domain is the {k_rule} median "
            "claim count over every model (pipeline.score). Read from the verifiers' verdicts "
            "stored in the project; annotator and date filters do not apply here.",
        ),
        tuple(tables),
        data=scores_of,
    )


def factscore_section(data: ReportData) -> list[Section]:
    project, filters = data.project, data.filters
    docs = None
    if filters.domains:
        docs = project.documents.filter(domain__in=filters.domains)  # a subquery, not ids
    sets = factscore_table.system_verdict_sets(project, data.verdicts())
    # the gold of all submitted answers (filters do not apply here): an unfiltered
    # report's golds are those, so they are not queried again
    gold = factscore_table.gold_verdict_set(project, None if filters.active else data.golds_of)
    rows = factscore_table.factscore_rows_of(project, [*sets, *([gold] if gold else [])], docs)
    if not rows:
        return []
    table = Table(
        "factscore",
        "FActScore per source model",
        factscore_table.COLUMNS,
        tuple(r.cells() for r in rows),
        decimals=1,
    )
    return [
        Section(
            "factscore",
            "FActScore",
            (
                "Per responding response S / (S + NS + IR + the model's atomic facts of "
                "sentences marked is-relevant: false), averaged over responding responses "
                "(Min et al., 2023), over the responding responses the set labels (labelled "
                "responses); one row per verdict set on atomic facts, claim-list system "
                "and source model. Annotator and date filters do not apply here.",
            ),
            (table,),
        )
    ]


def _response(
    external: str,
    model: str,
    domain: str,
    abstained: bool,
    n_claims: int,
    labels: list[str],
    extractor: str,
    verifier: str,
    shared: dict[str | None, ClaimResult] | None = None,
) -> ResponseResult:
    # scoring only reads them: one claim object per label (a few distinct labels) and
    # one unverified, shared by the section's responses (`shared`)
    shared = {} if shared is None else shared
    for label in labels:
        if label not in shared:
            shared[label] = ClaimResult(_BLANK_CLAIM, verdict=PipelineVerdict(label, "", True))
    if None not in shared:
        shared[None] = ClaimResult(_BLANK_CLAIM)
    claims = [shared[label] for label in labels]
    claims += [shared[None]] * max(n_claims - len(labels), 0)
    return ResponseResult(
        id=external,
        response="",
        question=None,
        model=model or "(unknown model)",
        domain=domain,
        abstained=abstained,
        extractor=extractor,
        extraction_model="",
        verification_model=verifier,
        prompt_version="",
        label_mode="",
        retriever="",
        claims=claims,
    )


def _k(k: float | None) -> Cell:
    """K as the paper prints it; None (no scored response in the domain) stays empty."""
    return None if k is None else int(k) if float(k).is_integer() else k


def _score_tables(verifier: str, extractor: str, scores: pipeline_score.ScoresTable) -> list[Table]:
    slug = f"{slugify(verifier)}-{slugify(extractor)}"
    domains = sorted(scores.k)
    models = sorted({r.model for r in scores.rows})
    cell = {(r.model, r.domain): r.veriscore for r in scores.rows if r.responses}
    averages: dict[str, float] = {}
    wide_rows: list[tuple[Cell, ...]] = [
        (
            "K",
            *[_k(scores.k[d]) for d in domains],
            None,
        )
    ]
    for m in models:
        values = [cell.get((m, d)) for d in domains]
        present = [v for v in values if v is not None]
        if present:
            averages[m] = sum(present) / len(present)
        wide_rows.append((m, *values, averages.get(m)))
    taus: list[Cell] = []
    for d in domains:
        column = {m: cell[(m, d)] for m in models if (m, d) in cell}
        taus.append(stats.kendall_tau(column, averages).tau)  # type: ignore[arg-type]
    wide_rows.append(("Kendall's tau w/ Avg.", *taus, 1.0 if len(averages) > 1 else None))
    tables = [
        Table(
            f"veriscore-{slug}",
            f"VERIScore per model and domain, verifier {verifier}, claims by {extractor} "
            "(VeriScore Table 3; K in the first row)",
            ("model", *[d or "(no domain)" for d in domains], "Avg."),
            tuple(wide_rows),
            note="VERIScore x100 per model and domain; the last row is Kendall's tau between "
            "each domain's scores and the models' average.",
            decimals=2,
        ),
        Table(
            f"veriscore-{slug}-detail",
            f"VERIScore details, verifier {verifier}, claims by {extractor}",
            (
                "model",
                "domain",
                "responses",
                "abstained",
                "K",
                "VERIScore",
                "precision",
                "recall",
                "mean claims",
                "unverified claims",
            ),
            tuple(
                (
                    r.model,
                    r.domain,
                    r.responses,
                    r.abstained,
                    r.k,
                    r.veriscore,
                    r.precision,
                    r.recall,
                    r.mean_claims,
                    r.unverified,
                )
                for r in scores.rows
            ),
        ),
    ]
    if scores.correlations:
        tables.append(
            Table(
                f"veriscore-{slug}-kendall",
                f"Kendall's tau between domains, verifier {verifier}",
                ("domain A", "domain B", "models", "tau", "p-value", "note"),
                tuple(
                    (c.domain_a, c.domain_b, c.models, c.tau, c.p_value, c.note)
                    for c in scores.correlations
                ),
            )
        )
    return tables
