"""F1@K per response, VERIScore per (model, domain), Kendall tau between domains (§2.4)."""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from dataclasses import dataclass

from pipeline.types import ResponseResult


@dataclass(frozen=True)
class ResponseScore:
    id: str
    model: str
    domain: str
    abstained: bool
    incomplete: bool  # some calls failed: left out of K and of the means
    claims: int
    supported: int
    unverified: int  # unparsed or failed verdicts: neither supported nor unsupported
    k: float
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class ModelDomainScore:
    model: str
    domain: str
    responses: int  # scored (neither abstained nor incomplete)
    abstained: int
    incomplete: int  # left out because some of their calls failed
    k: float
    veriscore: float  # mean F1@K over scored responses, x100 as in the paper
    precision: float
    recall: float
    mean_claims: float
    unverified: int


@dataclass(frozen=True)
class DomainCorrelation:
    domain_a: str
    domain_b: str
    models: int
    tau: float | None
    p_value: float | None
    note: str = ""


@dataclass(frozen=True)
class ScoresTable:
    k: dict[str, float]
    k_rule: str
    responses: list[ResponseScore]
    rows: list[ModelDomainScore]
    correlations: list[DomainCorrelation]
    incomplete: int = 0  # responses left out because some of their calls failed


def median_k(counts: list[int], rule: str = "upper") -> float:
    """K for a domain. VeriScore's code takes the upper median of the claim counts."""
    if not counts:
        return 0.0
    if rule == "upper":
        return float(statistics.median_high(counts))
    if rule == "lower":
        return float(statistics.median_low(counts))
    if rule == "mean":  # the usual median, averaging the two middle values
        return float(statistics.median(counts))
    raise ValueError(f"unknown K rule {rule!r}")


def f1_at_k(supported: int, claims: int, k: float) -> tuple[float, float, float]:
    """(precision, recall, F1@K); all 0 when nothing is supported (this covers 0 claims)."""
    if supported <= 0 or claims <= 0:
        return 0.0, 0.0, 0.0
    precision = supported / claims
    recall = 1.0 if k <= 0 else min(supported / k, 1.0)
    return precision, recall, 2 * precision * recall / (precision + recall)


MODES = ("default", "reference")


def score_response(r: ResponseResult, k: float, *, mode: str = "default") -> ResponseScore:
    # Unparsed or failed verdicts leave |C| for P: counting them as unsupported would
    # report a parsing problem as a factuality problem. They are reported on their own.
    verified = r.n_claims - r.n_unverified
    p, rec, f1 = f1_at_k(r.n_supported, verified, k)
    return ResponseScore(
        r.id,
        r.model,
        r.domain,
        r.abstained,
        r.incomplete,
        r.n_claims,
        r.n_supported,
        r.n_unverified,
        k,
        p,
        rec,
        f1,
    )


def score_results(
    results: list[ResponseResult],
    *,
    fixed_k: float | None = None,
    k_rule: str = "upper",
    mode: str = "default",
) -> ScoresTable:
    """Scores over a whole run: K needs every model's responses in a domain. Incomplete
    responses (failed calls) count neither for K nor in the means; their number is kept."""
    if mode not in MODES:
        raise ValueError(f"unknown scoring mode {mode!r} (one of {', '.join(MODES)})")
    counts: dict[str, list[int]] = defaultdict(list)
    for r in results:
        if not r.abstained and not r.incomplete:
            counts[r.domain].append(r.n_claims)
    domains = sorted({r.domain for r in results})
    k = {d: float(fixed_k) if fixed_k is not None else median_k(counts[d], k_rule) for d in domains}
    scored = [score_response(r, k[r.domain], mode=mode) for r in results]

    groups: dict[tuple[str, str], list[ResponseScore]] = defaultdict(list)
    for s in scored:
        groups[(s.model, s.domain)].append(s)
    rows = []
    for (model, domain), group in sorted(groups.items()):
        live = [s for s in group if not s.abstained and not s.incomplete]
        n = len(live)
        abstained = sum(s.abstained for s in group)
        rows.append(
            ModelDomainScore(
                model=model,
                domain=domain,
                responses=n,
                abstained=abstained,
                incomplete=len(group) - n - abstained,
                k=k[domain],
                veriscore=100 * sum(s.f1 for s in live) / n if n else 0.0,
                precision=sum(s.precision for s in live) / n if n else 0.0,
                recall=sum(s.recall for s in live) / n if n else 0.0,
                mean_claims=sum(s.claims for s in live) / n if n else 0.0,
                unverified=sum(s.unverified for s in live),
            )
        )
    rule = f"fixed K={fixed_k}" if fixed_k is not None else f"{k_rule} median"
    incomplete = sum(1 for r in results if r.incomplete and not r.abstained)
    return ScoresTable(k, rule, scored, rows, domain_correlations(rows), incomplete)


def domain_correlations(rows: list[ModelDomainScore]) -> list[DomainCorrelation]:
    """Kendall tau of the models' VERIScores between every pair of domains (paper Fig. 4)."""
    by_domain: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row.responses:
            by_domain[row.domain][row.model] = row.veriscore
    out = []
    for a, b in itertools.combinations(sorted(by_domain), 2):
        models = sorted(set(by_domain[a]) & set(by_domain[b]))
        if len(models) < 2:
            out.append(
                DomainCorrelation(a, b, len(models), None, None, "fewer than 2 shared models")
            )
            continue
        xs = [by_domain[a][m] for m in models]
        ys = [by_domain[b][m] for m in models]
        if len(set(xs)) < 2 or len(set(ys)) < 2:
            out.append(
                DomainCorrelation(a, b, len(models), None, None, "all models tie in a domain")
            )
            continue
        # Imported here: scipy.stats takes a second to load and most callers never need it.
        from scipy.stats import kendalltau

        res = kendalltau(xs, ys)
        out.append(DomainCorrelation(a, b, len(models), float(res.statistic), float(res.pvalue)))
    return out


def format_table(table: ScoresTable) -> str:
    lines = [f"K ({table.k_rule}): " + ", ".join(f"{d or '-'}={k:g}" for d, k in table.k.items())]
    head = (
        f"{'model':<28} {'domain':<16} {'n':>4} {'abst':>4} {'inc':>4} {'K':>5} {'VERIScore':>9} "
        f"{'P':>6} {'R':>6} {'claims':>6} {'unver':>5}"
    )
    lines += [head, "-" * len(head)]
    for r in table.rows:
        if r.responses:
            p, rec = r.precision, r.recall
            means = f"{r.veriscore:>9.1f} {p:>6.3f} {rec:>6.3f} {r.mean_claims:>6.1f}"
        else:  # nothing scored (all abstained or incomplete): no number, not a zero
            means = f"{'-':>9} {'-':>6} {'-':>6} {'-':>6}"
        lines.append(
            f"{r.model[:28]:<28} {(r.domain or '-')[:16]:<16} {r.responses:>4} {r.abstained:>4} "
            f"{r.incomplete:>4} {r.k:>5g} {means} {r.unverified:>5}"
        )
    for c in table.correlations:
        tau = f"tau={c.tau:.3f} p={c.p_value:.3f}" if c.tau is not None else f"undefined: {c.note}"
        lines.append(f"Kendall {c.domain_a} vs {c.domain_b} ({c.models} models): {tau}")
    if table.incomplete:
        lines.append(
            f"{table.incomplete} incomplete response(s) left out of K and VERIScore "
            "(some of their calls failed; rerun to fill them in)"
        )
    return "\n".join(lines)
