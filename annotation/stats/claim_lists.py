"""Claim lists of two extractors compared, on plain data (no Django) (VeriScore App. F,
footnote 25): per unit (a sentence, or a whole document when a list is not
sentence-aligned) exact match of the claim lists and ROUGE-L F1 (`rouge-score`, Google's
reimplementation of ROUGE-1.5.5) between the newline-joined lists. An empty list is
VeriScore's output "No verifiable claim.", so two empty lists match, as in the paper's
test data. Claims per sentence: VeriScore Table 1's VerRatio, the mean over responses of
claims / sentences. Each is a mean over units with its interval from resampling
documents (`resampling`: a document's sentences stay together)."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from rouge_score import rouge_scorer

from .coefficient import Coefficient as Estimate
from .resampling import Draws, clustered_means, resampled_means

NO_CLAIM = "No verifiable claim."  # VeriScore's extractor output for a sentence without claims


@functools.cache
def _scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rougeL"])


def joined(claims: Sequence[str]) -> str:
    """A claim list as VeriScore writes an extractor's output: one claim per line."""
    text = "\n".join(c.strip() for c in claims if c.strip())
    return text or NO_CLAIM


def rouge_l(a: Sequence[str], b: Sequence[str]) -> float:
    """ROUGE-L F1 between two newline-joined claim lists (symmetric)."""
    return float(_scorer().score(joined(a), joined(b))["rougeL"].fmeasure)


def exact_match(a: Sequence[str], b: Sequence[str]) -> bool:
    return joined(a) == joined(b)


class ListPair(NamedTuple):  # a tuple: a report makes one per sentence, made fast
    """The claims two systems extracted from one unit (a sentence or a whole document)."""

    document: Hashable
    a: tuple[str, ...]
    b: tuple[str, ...]


@dataclass(frozen=True)
class ListSimilarity:
    units: int
    documents: int
    both_empty: int
    exact_match: Estimate
    exact_match_with_claims: Estimate  # leaving out units where both lists are empty
    rouge_l: Estimate
    a_claims_per_unit: Estimate
    b_claims_per_unit: Estimate
    a_empty_share: Estimate
    b_empty_share: Estimate


def list_similarity(
    pairs: Sequence[ListPair],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    draws: Draws | None = None,
) -> ListSimilarity:
    """`draws`: resample counts kept between calls (see `Draws`)."""
    docs = list(dict.fromkeys(p.document for p in pairs))
    index = {d: i for i, d in enumerate(docs)}
    cluster = [index[p.document] for p in pairs]
    texts = [(joined(p.a), joined(p.b)) for p in pairs]
    matches = [float(a == b) for a, b in texts]  # exact_match
    rouge: dict[tuple[str, str], float] = {}  # many units repeat (two empty lists, ...)
    for key in texts:
        if key not in rouge:
            rouge[key] = float(_scorer().score(*key)["rougeL"].fmeasure)  # rouge_l
    with_claims = [bool(p.a or p.b) for p in pairs]
    (
        exact,
        exact_with_claims,
        rouge_mean,
        a_claims,
        b_claims,
        a_empty,
        b_empty,
    ) = clustered_means(
        [
            (matches, None),
            (matches, with_claims),
            ([rouge[key] for key in texts], None),
            ([float(len(p.a)) for p in pairs], None),
            ([float(len(p.b)) for p in pairs], None),
            ([float(not p.a) for p in pairs], None),
            ([float(not p.b) for p in pairs], None),
        ],
        cluster,
        len(docs),
        bootstrap,
        seed,
        draws,
    )
    return ListSimilarity(
        units=len(pairs),
        documents=len(docs),
        both_empty=sum(not w for w in with_claims),
        exact_match=exact,
        exact_match_with_claims=exact_with_claims,
        rouge_l=rouge_mean,
        a_claims_per_unit=a_claims,
        b_claims_per_unit=b_claims,
        a_empty_share=a_empty,
        b_empty_share=b_empty,
    )


class ResponseExtraction(NamedTuple):  # a tuple: a report makes one per claim list
    document: Hashable
    domain: str
    claims: int
    sentences: int
    # sentences with no claim; None when the list is not sentence-aligned
    empty_sentences: int | None = None


@dataclass(frozen=True)
class ClaimDensity:
    domain: str | None  # None: every domain
    responses: int
    sentences: int
    claims: int
    ratio: Estimate  # mean over responses of claims / sentences (VeriScore's VerRatio)
    aligned_responses: int
    empty_share: Estimate  # sentences with no claim / sentences, over aligned responses


def claim_density(
    responses: Sequence[ResponseExtraction],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    draws: Draws | None = None,
) -> list[ClaimDensity]:
    """Per domain and over all domains; responses without sentences are left out.
    `draws`: resample counts kept between calls (see `Draws`)."""
    usable = [r for r in responses if r.sentences > 0]
    claims = np.array([r.claims for r in usable], dtype=np.int64)
    sentences = np.array([r.sentences for r in usable], dtype=np.int64)
    aligned = np.array([r.empty_sentences is not None for r in usable], dtype=bool)
    empties = np.array([r.empty_sentences or 0 for r in usable], dtype=np.float64)
    domains = [r.domain for r in usable]
    by_domain: dict[str | None, npt.NDArray[np.bool_]] = {
        d: np.array([x == d for x in domains], dtype=bool) for d in dict.fromkeys(domains)
    }
    if len(by_domain) > 1:
        by_domain[None] = np.ones(len(usable), dtype=bool)
    ratio_of = claims / sentences  # per response (a cluster): claims / sentences (one unit)
    out = []
    for domain in sorted(by_domain, key=lambda d: (d is None, d or "")):
        group = by_domain[domain]
        n = int(group.sum())
        ratios = np.stack([ratio_of[group], np.ones(n)], axis=1)
        # The share of empty sentences pools the sentences of the sentence-aligned
        # responses: per response, its empty sentences over its sentences.
        mine = group & aligned
        shares = np.stack([empties[mine], sentences[mine].astype(np.float64)], axis=1)
        if len(shares) == n:  # the same clusters: one set of draws for both
            ratio, empty = resampled_means(np.hstack([ratios, shares]), bootstrap, seed, draws)
        else:
            (ratio,) = resampled_means(ratios, bootstrap, seed, draws)
            (empty,) = resampled_means(shares, bootstrap, seed, draws)
        out.append(
            ClaimDensity(
                domain,
                n,
                int(sentences[group].sum()),
                int(claims[group].sum()),
                ratio,
                len(shares),
                empty,
            )
        )
    return out
