"""F1@K per response, VERIScore per (model, domain), Kendall tau between domains (§2.4)."""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pipeline.types import ERROR, SUPPORTED, UNPARSED, ResponseResult

# What the released VeriScore 2.0.3 does with a response the reference mode scores: a
# claimless one makes its utils.py divide S by |C| = 0; an abstention first in the file
# stops veriscore.py before any call (`question` is not yet set).
CLAIMLESS = "ZeroDivisionError"
ABSTAINED_FIRST = "UnboundLocalError"


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__,
# several times slower, and a report makes one per response.
@dataclass
class ResponseScore:
    id: str
    model: str
    domain: str
    abstained: bool
    incomplete: bool  # left out of K and the means: failed calls, or (default mode) unparsed
    claims: int
    supported: int
    unverified: int  # unparsed or failed verdicts: neither supported nor unsupported
    k: float | None
    # None when nothing was measured: abstained or incomplete (never a 0 that looks real)
    precision: float | None
    recall: float | None
    f1: float | None
    # reference mode: the error the released code raises on this response ("" if none);
    # such a response is left out of the means (a claimless one still counts for K)
    released: str = ""


@dataclass(frozen=True)
class ModelDomainScore:
    model: str
    domain: str
    responses: int  # scored (neither abstained nor incomplete)
    abstained: int
    incomplete: int  # left out: some of their calls failed or verdicts were unparsed
    k: float | None
    # Means over scored responses, None (JSON null) when there is none.
    veriscore: float | None  # mean F1@K over scored responses, x100 as in the paper
    precision: float | None
    recall: float | None
    mean_claims: float | None
    unverified: int
    claimless: int = 0  # reference mode: in K, left out of the means (released: a crash)


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
    k: dict[str, float | None]  # None: no response of the domain was scored
    k_rule: str
    responses: list[ResponseScore]
    rows: list[ModelDomainScore]
    correlations: list[DomainCorrelation]
    incomplete: int = 0  # responses left out of K and the means (failed calls or unparsed)
    unparsed: int = 0  # of those, left out for unparsed verdicts only (default mode)
    # reference mode: what the released code prints, computed its way (released_figures)
    released: dict[str, Any] = field(default_factory=dict)


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


# default: a response with an unparsed verdict is incomplete (left out, as a failed call
# is); reference: an unparsed verdict counts as not supported, as the released code does.
MODES = ("default", "reference")


class Counted(NamedTuple):
    """What scoring reads of a response (a ResponseResult's fields and counts), for a
    caller that has its verdict labels and no claims (the report, from stored verdicts)."""

    id: str
    model: str
    domain: str
    abstained: bool
    extractor: str
    n_claims: int
    n_supported: int
    n_unverified: int
    incomplete: bool

    @classmethod
    def of_labels(
        cls, who: tuple[str, str, str, bool, str], labels: list[str], n_claims: int
    ) -> Counted:
        """`who` (id, model, domain, abstained, extractor) with n_claims claims, the first
        with these verdict labels, the rest none: counted as ResponseResult counts them."""
        blank = max(n_claims - len(labels), 0)
        unverified = blank + labels.count(UNPARSED) + labels.count(ERROR)
        return cls(*who, len(labels) + blank, labels.count(SUPPORTED), unverified, ERROR in labels)


Scored = ResponseResult | Counted  # what score_results takes


def left_out(r: Scored, mode: str = "default") -> bool:
    """Not scored: some of its calls failed, or (default mode) a verdict is unparsed or
    missing. P is always S / |C| (paper §2): never rescored on a smaller |C|."""
    if r.abstained:
        return False
    if r.incomplete:
        return True
    return mode == "default" and r.n_unverified > 0


def _veriscore(r: Scored, mode: str) -> bool:
    """Scored as the released VeriScore scores (its crashes listed): the reference mode,
    but not VeriFastScore's (its released score is verifastscore.released_scores)."""
    return mode == "reference" and r.extractor != "verifastscore"


def score_response(
    r: Scored, k: float | None, *, mode: str = "default", out: bool | None = None
) -> ResponseScore:
    """`out`: left_out(r, mode) when the caller has it."""
    out = left_out(r, mode) if out is None else out
    released = CLAIMLESS if _veriscore(r, mode) and not r.abstained and not r.n_claims else ""
    if r.abstained or out or k is None or released:
        p = rec = f1 = None
    else:
        p, rec, f1 = f1_at_k(r.n_supported, r.n_claims, k)
    return ResponseScore(
        r.id,
        r.model,
        r.domain,
        r.abstained,
        out,
        r.n_claims,
        r.n_supported,
        r.n_unverified,
        k,
        p,
        rec,
        f1,
        released,
    )


def _mean(values: list[float | None], scale: float = 1.0) -> float | None:
    known = [v for v in values if v is not None]
    return scale * sum(known) / len(known) if known else None


def score_results(
    results: Sequence[Scored],
    *,
    fixed_k: float | None = None,
    k_rule: str = "upper",
    mode: str = "default",
) -> ScoresTable:
    """Scores over a whole run: K needs every model's responses in a domain. Responses
    left out (failed calls; in the default mode also unparsed verdicts) count neither for
    K nor in the means; their number is kept. Nothing measured is None, never 0."""
    if mode not in MODES:
        raise ValueError(f"unknown scoring mode {mode!r} (one of {', '.join(MODES)})")
    outs = [left_out(r, mode) for r in results]  # each response's, once
    counts: dict[str, list[int]] = defaultdict(list)
    for r, out in zip(results, outs, strict=True):
        if not r.abstained and not out:
            counts[r.domain].append(r.n_claims)
    domains = sorted({r.domain for r in results})
    k: dict[str, float | None] = {
        d: float(fixed_k)
        if fixed_k is not None
        else (median_k(counts[d], k_rule) if counts[d] else None)
        for d in domains
    }
    scored = [
        score_response(r, k[r.domain], mode=mode, out=out)
        for r, out in zip(results, outs, strict=True)
    ]

    groups: dict[tuple[str, str], list[ResponseScore]] = defaultdict(list)
    for s in scored:
        groups[(s.model, s.domain)].append(s)
    rows = []
    for (model, domain), group in sorted(groups.items()):
        claimless = sum(s.released == CLAIMLESS for s in group)
        live = [s for s in group if not s.abstained and not s.incomplete and not s.released]
        abstained = sum(s.abstained for s in group)
        rows.append(
            ModelDomainScore(
                model=model,
                domain=domain,
                responses=len(live),
                abstained=abstained,
                incomplete=len(group) - len(live) - abstained - claimless,
                k=k[domain],
                veriscore=_mean([s.f1 for s in live], 100),
                precision=_mean([s.precision for s in live]),
                recall=_mean([s.recall for s in live]),
                mean_claims=_mean([s.claims for s in live]),
                unverified=sum(s.unverified for s in live),
                claimless=claimless,
            )
        )
    rule = f"fixed K={fixed_k}" if fixed_k is not None else f"{k_rule} median"
    incomplete = sum(1 for s in scored if s.incomplete)
    unparsed = sum(1 for r, out in zip(results, outs, strict=True) if out and not r.incomplete)
    veriscore = results and all(_veriscore(r, mode) for r in results)
    released = released_figures(results, outs) if veriscore else {}
    return ScoresTable(
        k, rule, scored, rows, domain_correlations(rows), incomplete, unparsed, released
    )


def released_figures(results: Sequence[Scored], outs: list[bool]) -> dict[str, Any]:
    """What the released VeriScore 2.0.3 prints at the end of a run (utils.get_veriscore),
    computed as it computes it: per response the triplet (supported, |C|, sentences); per
    domain K_median = the sorted claim counts' element n//2 and K_max their largest, over
    every response that was not abstained, claimless ones included (get_stats); per
    domain and model the means of F1@K_median and F1@K_max (get_avg_numbers), in the
    order in which domains and models first come. Where the released code raises, the
    response is listed with the error and left out of the means: a claimless response
    (its P = S / 0) and every response of a domain whose K_median is 0; an abstention
    first in the file. Responses left out for failed calls count nowhere."""
    triplets: dict[str, dict[str, list[tuple[str, int, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    errors: list[dict[str, str]] = []
    if results and results[0].abstained:
        errors.append({"id": results[0].id, "error": ABSTAINED_FIRST})
    for r, out in zip(results, outs, strict=True):
        if not r.abstained and not out:
            triplets[r.domain][r.model].append((r.id, r.n_supported, r.n_claims))
    k: dict[str, dict[str, int]] = {}
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    for domain, by_model in triplets.items():
        counts = sorted(c for model in by_model.values() for _, _, c in model)
        k_median, k_max = counts[len(counts) // 2], counts[-1]
        k[domain] = {"K_median": k_median, "K_max": k_max}
        for model, triplet_lst in by_model.items():
            kept = []
            for rid, supported, claims in triplet_lst:
                if claims and k_median:
                    kept.append((supported, claims))
                else:
                    errors.append({"id": rid, "error": CLAIMLESS})
            if not kept:
                continue
            prec = [s / c for s, c in kept]
            rec_med = [min(s / k_median, 1) for s, _ in kept]
            rec_max = [min(s / k_max, 1) for s, _ in kept]
            f1_med = [
                2 * p * r / (p + r) if r > 0 else 0 for p, r in zip(prec, rec_med, strict=True)
            ]
            f1_max = [
                2 * p * r / (p + r) if r > 0 else 0 for p, r in zip(prec, rec_max, strict=True)
            ]
            f1_median, f1_kmax = sum(f1_med) / len(f1_med), sum(f1_max) / len(f1_max)
            rows.append(
                {
                    "domain": domain,
                    "model": model,
                    "responses": len(kept),
                    "f1_at_k_median": f1_median,
                    "f1_at_k_max": f1_kmax,
                }  # fmt: skip
            )
            lines.append(
                f"[{domain}-{model}] \nF1@k median: {f1_median:.3f}, F1@k max: {f1_kmax:.3f}"
            )
    return {"k": k, "rows": rows, "errors": errors, "printed": "\n".join(lines)}


def no_verdict_parsed(results: list[ResponseResult]) -> str:
    """'' unless the run verified claims and not one answer could be parsed: then the
    verifier does not follow the prompt (no ###label###), and that is a failure to report,
    not a VERIScore of 0."""
    verdicts = [c.verdict for r in results for c in r.claims if c.verdict is not None]
    unparsed = [v for v in verdicts if v.label == UNPARSED]
    if not unparsed or len(unparsed) < sum(v.label != ERROR for v in verdicts):
        return ""
    first = " ".join(unparsed[0].raw_output.split())[:120]
    return (
        f"FAILED: none of the {len(unparsed)} verifier answer(s) could be parsed (no "
        f"###label###; the first: {first!r}); nothing was scored. Check the verification "
        "model and prompt."
    )


def domain_correlations(rows: list[ModelDomainScore]) -> list[DomainCorrelation]:
    """Kendall tau of the models' VERIScores between every pair of domains (paper Fig. 4)."""
    by_domain: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row.veriscore is not None:
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


def _k(k: float | None) -> str:
    return "-" if k is None else f"{k:g}"


def format_table(table: ScoresTable) -> str:
    lines = [f"K ({table.k_rule}): " + ", ".join(f"{d or '-'}={_k(k)}" for d, k in table.k.items())]
    head = (
        f"{'model':<28} {'domain':<16} {'n':>4} {'abst':>4} {'inc':>4} {'K':>5} {'VERIScore':>9} "
        f"{'P':>6} {'R':>6} {'claims':>6} {'unver':>5}"
    )
    lines += [head, "-" * len(head)]
    for r in table.rows:
        if r.responses:
            means = (
                f"{r.veriscore or 0.0:>9.1f} {r.precision or 0.0:>6.3f} "
                f"{r.recall or 0.0:>6.3f} {r.mean_claims or 0.0:>6.1f}"
            )
        else:  # nothing scored (all abstained or incomplete): no number, not a zero
            means = f"{'-':>9} {'-':>6} {'-':>6} {'-':>6}"
        lines.append(
            f"{r.model[:28]:<28} {(r.domain or '-')[:16]:<16} {r.responses:>4} {r.abstained:>4} "
            f"{r.incomplete:>4} {_k(r.k):>5} {means} {r.unverified:>5}"
        )
    for c in table.correlations:
        tau = f"tau={c.tau:.3f} p={c.p_value:.3f}" if c.tau is not None else f"undefined: {c.note}"
        lines.append(f"Kendall {c.domain_a} vs {c.domain_b} ({c.models} models): {tau}")
    failed = table.incomplete - table.unparsed
    if failed:
        lines.append(
            f"{failed} incomplete response(s) left out of K and VERIScore "
            "(some of their calls failed; rerun to fill them in)"
        )
    if table.unparsed:
        lines.append(
            f"{table.unparsed} incomplete response(s) left out of K and VERIScore "
            "(a verifier answer could not be parsed; see the verification file)"
        )
    if table.released:
        lines += released_text(table.released)
    return "\n".join(lines)


def released_text(released: dict[str, Any]) -> list[str]:
    """The released code's figures as it prints them, and where it would have stopped."""
    lines = ["The released VeriScore 2.0.3 prints (utils.get_veriscore, computed its way):"]
    lines += [f"K {d}: median {v['K_median']}, max {v['K_max']}" for d, v in released["k"].items()]
    if released["printed"]:
        lines.append(released["printed"])
    for error in (CLAIMLESS, ABSTAINED_FIRST):
        ids = [e["id"] for e in released["errors"] if e["error"] == error]
        if ids:
            shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
            lines.append(f"released: {error} on {len(ids)} response(s) ({shown}); left out above")
    return lines
