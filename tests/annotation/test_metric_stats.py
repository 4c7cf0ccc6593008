"""stats.claim_lists and stats.correlation: checked against documented examples and by hand.
No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from annotation.stats import claim_lists, correlation

# --------------------------------------------------------------------------- ROUGE-L


def test_rouge_l_reproduces_the_librarys_own_examples() -> None:
    # rouge_score/rouge_scorer_test.py: testRougeLConsecutive and testRougeLNonConsecutive.
    assert claim_lists.rouge_l(["testing one two"], ["testing one"]) == pytest.approx(4 / 5)
    assert claim_lists.rouge_l(["testing one two"], ["testing two"]) == pytest.approx(4 / 5)


def test_rouge_l_is_two_lcs_over_both_lengths_on_joined_lists() -> None:
    # "ada lovelace was born in 1815" (6 tokens) vs "ada was born in 1815" (5): LCS 5.
    assert claim_lists.rouge_l(
        ["Ada Lovelace was born in 1815."], ["Ada was born in 1815."]
    ) == pytest.approx(2 * 5 / (6 + 5))
    # The lists are joined by newlines, which ROUGE-L's tokenizer ignores: one sequence.
    assert claim_lists.joined(["a b", " c "]) == "a b\nc"
    assert claim_lists.rouge_l(["a b", "c"], ["a b c"]) == pytest.approx(1.0)
    assert not claim_lists.exact_match(["a b", "c"], ["a b c"])


def test_an_empty_list_is_no_verifiable_claim() -> None:
    assert claim_lists.joined([]) == claim_lists.NO_CLAIM == "No verifiable claim."
    assert claim_lists.exact_match([], []) and claim_lists.rouge_l([], []) == pytest.approx(1.0)
    assert claim_lists.rouge_l(["Paris is in France."], []) == 0.0


# --------------------------------------------------------------------------- claim lists


def test_list_similarity_by_hand() -> None:
    pairs = [
        claim_lists.ListPair(
            "d1", ("Ada was born in 1815.",), ("Ada was born in 1815.",)
        ),  # EM, R 1
        claim_lists.ListPair("d1", (), ()),  # both empty: EM, R 1
        claim_lists.ListPair("d2", ("testing one two",), ("testing one",)),  # R 0.8
        claim_lists.ListPair("d2", ("x",), ()),  # R 0
    ]
    r = claim_lists.list_similarity(pairs, bootstrap=2000, seed=1)
    assert (r.units, r.documents, r.both_empty) == (4, 2, 1)
    assert r.exact_match.value == pytest.approx(2 / 4)
    assert r.exact_match_with_claims.value == pytest.approx(1 / 3)
    assert r.rouge_l.value == pytest.approx((1 + 1 + 0.8 + 0) / 4)
    assert r.a_claims_per_unit.value == pytest.approx(3 / 4)
    assert r.b_claims_per_unit.value == pytest.approx(2 / 4)
    assert r.a_empty_share.value == pytest.approx(1 / 4)
    assert r.b_empty_share.value == pytest.approx(2 / 4)
    # Documents are resampled whole: a resample of d2 twice gives ROUGE-L 0.4, of d1 twice
    # 1.0, each with probability 1/4, so those are the 2.5 % and 97.5 % percentiles.
    assert (r.rouge_l.ci_low, r.rouge_l.ci_high) == pytest.approx((0.4, 1.0))
    assert (r.exact_match.ci_low, r.exact_match.ci_high) == pytest.approx((0.0, 1.0))


def test_without_bootstrap_there_are_no_intervals() -> None:
    r = claim_lists.list_similarity([claim_lists.ListPair(1, ("a",), ("a",))], bootstrap=0)
    assert r.exact_match.value == 1.0 and r.exact_match.ci_low is None


def test_claims_per_sentence_per_domain_and_overall() -> None:
    responses = [
        claim_lists.ResponseExtraction("r1", "Bio", claims=3, sentences=2, empty_sentences=0),
        claim_lists.ResponseExtraction("r2", "Bio", claims=1, sentences=4),  # a flat list
        claim_lists.ResponseExtraction("r3", "Story", claims=0, sentences=5, empty_sentences=5),
        claim_lists.ResponseExtraction(
            "r4", "Story", claims=0, sentences=0
        ),  # no sentence: left out
    ]
    by = {d.domain: d for d in claim_lists.claim_density(responses, bootstrap=200, seed=0)}
    assert set(by) == {"Bio", "Story", None}
    assert by["Bio"].ratio.value == pytest.approx((3 / 2 + 1 / 4) / 2)
    assert (by["Bio"].responses, by["Bio"].sentences, by["Bio"].claims) == (2, 6, 4)
    assert by["Bio"].aligned_responses == 1 and by["Bio"].empty_share.value == 0.0
    assert by["Story"].ratio.value == 0.0 and by["Story"].empty_share.value == 1.0
    assert by[None].ratio.value == pytest.approx((3 / 2 + 1 / 4 + 0) / 3)
    assert by[None].empty_share.value == pytest.approx(5 / 7)
    assert by["Bio"].ratio.ci_low <= by["Bio"].ratio.value <= by["Bio"].ratio.ci_high


# --------------------------------------------------------------------------- scores


def test_factscore_leaves_out_irrelevant_and_unlabelled_facts() -> None:
    assert correlation.factscore(["S", "NS", "IR", None, "contradicted"]) == pytest.approx(1 / 3)
    assert correlation.factscore(["Supported.", "inconclusive-not-enough"]) == pytest.approx(1 / 2)
    assert correlation.factscore(["IR", None]) is None


def test_f1_at_k_uses_the_domains_upper_median_claim_count() -> None:
    responses = [
        correlation.ResponseLabels("r1", "m", "D", 2, ("S", "S")),
        correlation.ResponseLabels("r2", "m", "D", 4, ("S", "NS", "S", None)),
        correlation.ResponseLabels("r3", "m", "D", 3, ("NS", "NS", "IR")),
    ]
    scores = correlation.response_scores(responses)
    # K = upper median of 2, 4, 3 = 3. r1: P 1, R 2/3; r2: P 2/3 (one unlabelled), R 2/3.
    assert scores["F1@K"]["r1"] == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
    assert scores["F1@K"]["r2"] == pytest.approx(2 / 3)
    assert scores["F1@K"]["r3"] == 0.0
    assert scores["FActScore"] == pytest.approx({"r1": 1.0, "r2": 2 / 3, "r3": 0.0})


# --------------------------------------------------------------------------- correlations


def test_correlations_reproduce_scipys_documented_examples() -> None:
    # scipy.stats.pearsonr, spearmanr and kendalltau docstring examples.
    c = correlation.correlate([1, 2, 3, 4, 5, 6, 7], [10, 9, 2.5, 6, 4, 3, 2])
    assert c.pearson.value == pytest.approx(-0.8285038835884277)
    assert c.pearson.p_value == pytest.approx(0.021280260007523, rel=1e-6)
    c = correlation.correlate([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert c.spearman.value == pytest.approx(0.8207826816681233)
    assert c.spearman.p_value == pytest.approx(0.0885870053135438, rel=1e-6)
    c = correlation.correlate([12, 2, 1, 12, 2], [1, 4, 7, 1, 0])
    assert c.kendall.value == pytest.approx(-0.47140452079103173)
    assert c.kendall.p_value == pytest.approx(0.2827454599327748, rel=1e-6)


def test_example_correlation_by_hand() -> None:
    # x = 1, 2, 3 and y = 1, 3, 2: r = rho = 1 / 2; tau = (2 concordant - 1 discordant) / 3.
    # "d" is scored by one side only and is left out.
    c = correlation.example_correlation(
        {"a": 1, "b": 2, "c": 3, "d": 9}, {"a": 1, "b": 3, "c": 2}, bootstrap=500, seed=0
    )
    assert c.n == 3 and c.undefined_reason is None
    assert c.pearson.value == pytest.approx(0.5)
    assert c.spearman.value == pytest.approx(0.5)
    assert c.kendall.value == pytest.approx(1 / 3)
    assert -1 <= c.pearson.ci_low <= c.pearson.ci_high <= 1


def test_system_correlation_correlates_the_systems_mean_scores() -> None:
    x = {"r1": 0.2, "r2": 0.4, "r3": 0.6, "r4": 0.9, "r5": 0.7}
    y = {"r1": 0.1, "r2": 0.3, "r3": 0.5, "r4": 0.4, "r5": 0.6}
    model = {"r1": "m1", "r2": "m1", "r3": "m2", "r4": "m3", "r5": "m3"}
    c = correlation.system_correlation(x, y, model, level="system", bootstrap=500, seed=0)
    # Means: x = .3, .6, .8 and y = .2, .5, .5; deviations x 30ths: -8, 1, 7; y: -6, 3, 3.
    assert c.n == 3
    assert c.pearson.value == pytest.approx(72 / math.sqrt(114 * 54))
    # Ranks x 1, 2, 3 and y 1, 2.5, 2.5; tau-b with one tie in y: 2 / sqrt(3 * 2).
    assert c.spearman.value == pytest.approx(1.5 / math.sqrt(2 * 1.5))
    assert c.kendall.value == pytest.approx(2 / math.sqrt(6))
    assert [p[0] for p in c.points] == ["m1", "m2", "m3"]
    assert c.pearson.ci_low is not None and c.pearson.ci_high <= 1 + 1e-12


def test_too_few_systems_or_constant_scores_are_undefined() -> None:
    c = correlation.system_correlation(
        {"a": 1.0, "b": 0.5}, {"a": 0.2, "b": 0.1}, {"a": "m1", "b": "m2"}, level="system"
    )
    assert c.n == 2 and c.pearson.value is None
    assert c.undefined_reason == "undefined because fewer than 3 systems"
    c = correlation.example_correlation({1: 0.5, 2: 0.5, 3: 0.5}, {1: 0.1, 2: 0.2, 3: 0.3})
    assert c.kendall.value is None and "the same for all examples" in (c.undefined_reason or "")


def test_the_vectorised_bootstrap_formulas_equal_scipy_on_resamples_with_ties() -> None:
    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, size=12).astype(float)  # few values: many ties
    b = rng.integers(0, 3, size=12).astype(float)
    counts = rng.multinomial(12, np.full(12, 1 / 12), size=20).astype(float)
    got = correlation._replicates(counts, a, b)
    for row, w in enumerate(counts):
        xs, ys = np.repeat(a, w.astype(int)), np.repeat(b, w.astype(int))
        if len(set(xs)) < 2 or len(set(ys)) < 2:
            assert math.isnan(got["pearson"][row])
            continue
        assert got["pearson"][row] == pytest.approx(stats.pearsonr(xs, ys).statistic)
        assert got["spearman"][row] == pytest.approx(stats.spearmanr(xs, ys).statistic)
        assert got["kendall"][row] == pytest.approx(stats.kendalltau(xs, ys).statistic)
    # Systems: one row of values per resample, every system counted once.
    xs, ys = rng.random((5, 4)), rng.integers(0, 2, size=(5, 4)).astype(float)
    got = correlation._system_replicates(correlation.system_parts(xs), correlation.system_parts(ys))
    for row in range(5):
        if len(set(ys[row])) > 1:
            x, y = xs[row], ys[row]
            assert got["kendall"][row] == pytest.approx(stats.kendalltau(x, y).statistic)
            assert got["spearman"][row] == pytest.approx(stats.spearmanr(x, y).statistic)
