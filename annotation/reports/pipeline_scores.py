"""Pipeline scores (F1@K, VERIScore) and FActScore from verdicts."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from pipeline import score as pipeline_score
from pipeline.score import Counted, Scored

from .. import stats
from ..answers import fetch
from ..models import Claim, ClaimList, Project, System, Verdict
from . import factscore_table
from .queries import ReportData
from .tables import Cell, Filters, Section, Table
from .verifiers import slugify

# --------------------------------------------------------------------------- pipeline


def score_run(
    results: Sequence[Scored], config: dict[str, Any] | None, *, k_rule: str = "upper"
) -> pipeline_score.ScoresTable:
    """A run's responses scored as its run page scores them: with the run's mode and fixed
    K (`config`, a PipelineRun's). None (verdicts imported, no run): the default mode, K by
    `k_rule`. The run page (tasks.finalize) and the report's Pipeline scores both call it."""
    config = config or {}
    fixed_k = config.get("fixed_k")
    return pipeline_score.score_results(
        results,
        fixed_k=float(fixed_k) if fixed_k else None,
        k_rule=k_rule,
        mode="reference" if config.get("reference") else "default",
    )


def _claimless(s: pipeline_score.ResponseScore) -> bool:
    return not s.abstained and not s.incomplete and s.claims == 0


def claimless_counts(
    responses: Iterable[pipeline_score.ResponseScore],
) -> Counter[tuple[str, str]]:
    """Responses that did not abstain and have no claim, per (model, domain)."""
    return Counter((s.model, s.domain) for s in responses if _claimless(s))


def claimless_note(responses: Iterable[pipeline_score.ResponseScore]) -> str:
    """How many responses without a claim the scores hold, and how they count."""
    held = [s for s in responses if _claimless(s)]
    if not held:
        return "No response without a claim (that did not abstain)."
    scored = sum(s.f1 is not None for s in held)
    how = []
    if scored:
        how.append(f"{scored} scored F1@K = 0 (P = R = 0), in the means")
    if len(held) - scored:
        released = {getattr(s, "released", "") for s in held if s.f1 is None} - {""}
        why = f" (released: {', '.join(sorted(released))})" if released else ""
        how.append(f"{len(held) - scored} left out of the means{why}")
    return (
        f"{len(held)} response(s) without a claim (not abstained): their 0 claims count "
        f"for K; {'; '.join(how)}."
    )


def stored_scores(scores: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run's stored scores (scores_json) for its page: each row with its claimless
    responses, and the note on how they count, as the report states them."""
    if not scores:
        return scores
    names = {f.name for f in dataclasses.fields(pipeline_score.ResponseScore)}
    responses = [
        pipeline_score.ResponseScore(**{k: v for k, v in r.items() if k in names})
        for r in scores.get("responses", [])
    ]
    counts = claimless_counts(responses)
    rows = [{**r, "claimless": counts[(r["model"], r["domain"])]} for r in scores["rows"]]
    undefined: dict[str, list[str]] = defaultdict(list)  # one line per reason, not per pair
    for c in scores.get("correlations", []):
        if c["tau"] is None:
            undefined[c["note"]].append(f"{c['domain_a'] or '–'} vs {c['domain_b'] or '–'}")
    return {
        **scores,
        "rows": rows,
        "claimless_note": claimless_note(responses),
        "undefined_taus": sorted(undefined.items()),
    }


def pipeline_section(data: ReportData) -> Section | None:
    project, filters, k_rule = data.project, data.filters, data.k_rule
    systems, rows = data.verdicts()
    verifiers = {pk: name for pk, (name, role) in systems.items() if role == System.VERIFIER}
    lists, scored = _scored_lists(project, filters, list(verifiers))
    # a verifier a run made is scored with the run's mode and K, as on its run page
    configs: dict[str, dict[str, Any] | None] = {
        verifiers[pk]: config
        for pk, config in System.objects.filter(pk__in=list(verifiers)).values_list(
            "pk", "pipeline_run__config"
        )
    }
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
    labels = _verifier_labels(rows, verifiers, info)
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
    scores_of: dict[tuple[str, str], pipeline_score.ScoresTable] = {}
    for verifier in sorted(labels):
        config = configs.get(verifier)
        # the run's extractor (veriscore, atomic...) as the run's own results name it
        kind = str(config.get("extractor", "")) if config else ""
        by_extractor = _results(kind, labels[verifier], info, sizes)
        for extractor, results in sorted(by_extractor.items()):
            scores = score_run(results, config, k_rule=k_rule)
            scores_of[(verifier, extractor)] = scores
            tables += _score_tables(verifier, extractor, scores)
    return Section(
        "pipeline",
        "Pipeline scores (VERIScore)",
        (
            f"Per response P = S/|C|, R = min(S/K, 1), F1@K; K per domain is the {k_rule} median "
            "claim count over every model (pipeline.score), or the run's fixed K; a verifier "
            "a pipeline run made is scored with the run's mode and K, as on its run page. "
            "Read from the verifiers' verdicts stored in the project; annotator and date "
            "filters do not apply here.",
        ),
        tuple(tables),
        data=scores_of,
    )


def _scored_lists(
    project: Project, filters: Filters, verifiers: list[int]
) -> tuple[QuerySet[ClaimList], QuerySet[ClaimList]]:
    """The project's claim lists (within the domain filter) and those scored."""
    lists = ClaimList.objects.filter(document__project=project)
    if filters.domains:
        lists = lists.filter(document__domain__in=filters.domains)
    # the lists scored: those with a verifier's verdict, abstentions and claimless lists
    # (no claim to verify), as a run scores its responses
    verified = Verdict.objects.filter(system__in=verifiers, claim__isnull=False)
    has_claims = Exists(Claim.objects.filter(claim_list=OuterRef("pk")))
    scored = lists.filter(
        Q(abstained=True) | ~has_claims | Q(pk__in=verified.values("claim__claim_list_id"))
    )
    return lists, scored


def _verifier_labels(
    rows: Iterable[tuple[Any, ...]], verifiers: dict[int, str], info: dict[int, Any]
) -> dict[str, dict[int, list[str]]]:
    """verifier -> claim list -> its verdicts as scored, on the lists scored."""
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
    return labels


def _results(
    kind: str,
    verified_lists: dict[int, list[str]],
    info: dict[int, tuple[str, str, str, str, bool]],
    sizes: dict[int, int],
) -> dict[str, list[Counted]]:
    """extractor -> the responses a verifier scored (its labels per list), as a run's
    results (`kind`: the run's extractor, if a run made the verifier)."""
    seen_extractors = {info[list_id][3] for list_id in verified_lists}
    by_extractor: dict[str, list[Counted]] = defaultdict(list)
    # in the lists' order (a run's order); abstained and claimless responses have no
    # claim to verify but are responses of the extractor's lists, as in the run
    for list_id, (external, model, domain, extractor, abstained) in sorted(info.items()):
        if extractor not in seen_extractors:
            continue
        verdict_labels = verified_lists.get(list_id)
        n_claims = sizes.get(list_id, 0)
        if verdict_labels is None and not abstained and n_claims:
            continue  # a list nobody verified is not a response of the table
        by_extractor[extractor].append(
            Counted.of_labels(
                (external, model or "(unknown model)", domain, abstained, kind or extractor),
                verdict_labels or [],
                0 if abstained else n_claims,
            )
        )
    return by_extractor


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


def _k(k: float | None) -> Cell:
    """K as the paper prints it; None (no scored response in the domain) stays empty."""
    return None if k is None else int(k) if float(k).is_integer() else k


def _wide_rows(scores: pipeline_score.ScoresTable, domains: list[str]) -> list[tuple[Cell, ...]]:
    """VeriScore's Table 3: K, then a row per model (its score per domain and average),
    then Kendall's tau of each domain's scores with the averages."""
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
    return wide_rows


def _score_tables(verifier: str, extractor: str, scores: pipeline_score.ScoresTable) -> list[Table]:
    slug = f"{slugify(verifier)}-{slugify(extractor)}"
    domains = sorted(scores.k)
    wide_rows = _wide_rows(scores, domains)
    claimless = claimless_counts(scores.responses)
    how = f"K: {scores.k_rule}. {claimless_note(scores.responses)}"
    tables = [
        Table(
            f"veriscore-{slug}",
            f"VERIScore per model and domain, verifier {verifier}, claims by {extractor} "
            "(VeriScore Table 3; K in the first row)",
            ("model", *[d or "(no domain)" for d in domains], "Avg."),
            tuple(wide_rows),
            note="VERIScore x100 per model and domain; the last row is Kendall's tau between "
            f"each domain's scores and the models' average. {how}",
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
                "claimless",
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
                    claimless[(r.model, r.domain)],
                    r.k,
                    r.veriscore,
                    r.precision,
                    r.recall,
                    r.mean_claims,
                    r.unverified,
                )
                for r in scores.rows
            ),
            note=f"claimless: responses without a claim that did not abstain. {how}",
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
