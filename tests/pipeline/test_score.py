from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.formats import load_results
from pipeline.score import (
    MODES,
    Counted,
    f1_at_k,
    format_table,
    median_k,
    no_verdict_parsed,
    score_results,
)
from pipeline.types import (
    Claim,
    ClaimResult,
    ResponseResult,
    SentenceClaims,
    Verdict,
)
from tests.requires import unavailable

from .conftest import PEER_DATA


def result(
    id: str, model: str, domain: str, labels: list[str], abstained: bool = False
) -> ResponseResult:
    r = ResponseResult(
        id=id,
        response="text",
        question=None,
        model=model,
        domain=domain,
        abstained=abstained,
        extractor="veriscore",
        extraction_model="m",
        verification_model="m",
        prompt_version="v",
        label_mode="binary",
        retriever="serper",
    )
    r.claims = [
        ClaimResult(Claim(f"claim {i}", i, "s"), verdict=Verdict(label, "", label != "unparsed"))
        for i, label in enumerate(labels)
    ]
    return r


def test_upper_median_is_the_default_k() -> None:
    assert median_k([1, 2, 3, 4]) == 3
    assert median_k([1, 2, 3, 4], "lower") == 2
    assert median_k([1, 2, 3, 4], "mean") == 2.5
    assert median_k([5, 1, 3]) == 3
    assert median_k([]) == 0


def test_f1_at_k_by_hand() -> None:
    # S=3 of |C|=4, K=6: P=0.75, R=0.5, F1=2*.75*.5/1.25=0.6
    assert f1_at_k(3, 4, 6) == pytest.approx((0.75, 0.5, 0.6))
    # recall is capped at 1
    assert f1_at_k(8, 10, 4) == pytest.approx((0.8, 1.0, 2 * 0.8 / 1.8))
    assert f1_at_k(0, 5, 3) == (0.0, 0.0, 0.0)
    assert f1_at_k(0, 0, 3) == (0.0, 0.0, 0.0)


def test_scores_table_by_hand() -> None:
    s, u = "supported", "unsupported"
    results = [
        result("a1", "A", "bio", [s, s, u]),  # 3 claims
        result("a2", "A", "bio", [s]),  # 1 claim
        result("b1", "B", "bio", [s, s, s, s, u]),  # 5 claims
        result("b2", "B", "bio", []),  # zero claims: no crash, F1 0
        result("b3", "B", "bio", [], abstained=True),
    ]
    table = score_results(results)
    # counts of non-abstained responses: [3, 1, 5, 0] -> upper median 3
    assert table.k == {"bio": 3.0}
    by_id = {r.id: r for r in table.responses}
    assert by_id["a1"].precision == pytest.approx(2 / 3)
    assert by_id["a1"].recall == pytest.approx(2 / 3)
    assert by_id["a1"].f1 == pytest.approx(2 / 3)
    assert by_id["a2"].f1 == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))  # 0.5
    assert by_id["b1"].f1 == pytest.approx(2 * 0.8 / 1.8)
    assert by_id["b2"].f1 == 0
    rows = {r.model: r for r in table.rows}
    assert rows["A"].veriscore == pytest.approx(100 * (2 / 3 + 0.5) / 2)
    assert rows["B"].veriscore == pytest.approx(100 * (2 * 0.8 / 1.8 + 0) / 2)
    assert rows["B"].responses == 2 and rows["B"].abstained == 1


def test_fixed_k_overrides_the_median() -> None:
    table = score_results([result("a", "A", "d", ["supported"] * 2)], fixed_k=4)
    assert table.k == {"d": 4.0}
    assert table.responses[0].recall == 0.5


def test_precision_is_s_over_all_claims_in_the_reference_mode() -> None:
    # The example: 4 claims, 2 supported, 2 unparsed; K = 4. The released code
    # counts an unparsed verdict as not supported: P = 2/4, R = 2/4, F1@4 = 0.5 (today's
    # code said P 1.0, F1 0.667 by dropping the unparsed ones from |C|).
    s, x = "supported", "unparsed"
    table = score_results([result("a", "A", "d", [s, s, x, x])], fixed_k=4, mode="reference")
    r = table.responses[0]
    assert (r.claims, r.supported, r.unverified, r.incomplete) == (4, 2, 2, False)
    assert (r.precision, r.recall, r.f1) == pytest.approx((0.5, 0.5, 0.5))
    assert table.rows[0].veriscore == pytest.approx(50.0)
    assert table.rows[0].unverified == 2 and table.incomplete == 0


def test_an_unparsed_verdict_makes_a_response_incomplete_in_the_default_mode() -> None:
    # Never rescored on a smaller |C|: left out of K and of the means, like a failed call.
    s, u, x = "supported", "unsupported", "unparsed"
    results = [
        result("a", "A", "d", [s, s, x, x]),
        result("b", "A", "d", [s, u]),
        result("c", "A", "d", [s] * 9),
    ]
    table = score_results(results)
    assert table.k == {"d": 9.0}  # upper median of 2 and 9, not of 4, 2 and 9 (which is 4)
    by_id = {r.id: r for r in table.responses}
    assert by_id["a"].incomplete and by_id["a"].precision is None and by_id["a"].f1 is None
    assert by_id["b"].precision == 0.5
    (row,) = table.rows
    assert (row.responses, row.incomplete, table.incomplete, table.unparsed) == (2, 1, 1, 1)
    text = format_table(table)
    assert "1 incomplete response(s) left out" in text and "could not be parsed" in text
    assert "calls failed" not in text


def test_only_abstentions_is_nothing_measured_not_a_zero() -> None:
    table = score_results([result("a", "A", "d", [], abstained=True)])
    assert table.k == {"d": None}
    (row,) = table.rows
    assert row.responses == 0 and row.abstained == 1
    assert (row.veriscore, row.precision, row.recall, row.mean_claims) == (None,) * 4
    assert table.responses[0].f1 is None
    assert "-" in format_table(table).splitlines()[3]


def test_a_mode_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scoring mode 'paper'"):
        score_results([], mode="paper")


def test_a_run_without_one_parsed_verdict_is_a_failure() -> None:
    x, e = "unparsed", "error"
    broken = [result("a", "A", "d", [x, x]), result("b", "A", "d", [x, e])]
    broken[0].claims[0].verdict.raw_output = "After reading, the claim is supported."  # type: ignore[union-attr]
    why = no_verdict_parsed(broken)
    assert "none of the 3 verifier answer(s) could be parsed" in why
    assert "the claim is supported." in why
    assert no_verdict_parsed([*broken, result("c", "A", "d", ["unsupported"])]) == ""
    assert no_verdict_parsed([result("d", "A", "d", [])]) == ""  # nothing to parse
    assert no_verdict_parsed([result("e", "A", "d", [e])]) == ""  # a failed call, said elsewhere


def test_kendall_tau_between_domains() -> None:
    s, u = "supported", "unsupported"
    results = []
    # three models ranked the same way in both domains -> tau = 1
    for model, n in (("A", 1), ("B", 2), ("C", 3)):
        for domain in ("bio", "qa"):
            results.append(result(f"{model}-{domain}", model, domain, [s] * n + [u] * (3 - n)))
    table = score_results(results, fixed_k=3)
    (corr,) = table.correlations
    assert (corr.domain_a, corr.domain_b, corr.models) == ("bio", "qa", 3)
    assert corr.tau == pytest.approx(1.0)


def test_kendall_tau_is_undefined_with_one_shared_model() -> None:
    results = [result("1", "A", "bio", ["supported"]), result("2", "A", "qa", ["supported"])]
    (corr,) = score_results(results).correlations
    assert corr.tau is None and "fewer than 2" in corr.note


def test_incomplete_responses_are_left_out_of_k_and_the_means_and_counted() -> None:
    partly_failed = result("2", "m", "d", ["supported", "error"])
    failed_extraction = result("3", "m", "d", [])
    failed_extraction.sentences = [SentenceClaims(0, "A sentence.", [], "", failed=True)]
    table = score_results(
        [result("1", "m", "d", ["supported"] * 4), partly_failed, failed_extraction]
    )
    assert (partly_failed.incomplete, failed_extraction.incomplete) == (True, True)
    assert table.k == {"d": 4.0}  # not the median of 4, 2 and 0 claims
    assert table.incomplete == 2
    (row,) = table.rows
    assert (row.responses, row.incomplete, row.veriscore) == (1, 2, 100.0)
    assert [s.incomplete for s in table.responses] == [False, True, True]


def test_an_outage_is_no_score() -> None:
    down = result("1", "m", "d", [])
    down.sentences = [SentenceClaims(0, "A sentence.", [], "", failed=True)]
    table = score_results([down])
    assert (table.rows[0].responses, table.rows[0].incomplete, table.incomplete) == (0, 1, 1)
    assert "1 incomplete response(s) left out" in format_table(table)
    assert "0.0" not in format_table(table).splitlines()[3]


def test_the_released_sample_scores_as_the_paper_defines_in_both_modes() -> None:
    # VeriScore's published data_sample: 25 claims, 24 verified "supported" by its gpt-4o.
    path = PEER_DATA / "veriscore" / "data_sample.jsonl"
    if not path.exists():
        unavailable(f"{path} (the shared peer data) is missing")
    [sample] = load_results(path)
    assert (sample.n_claims, sample.n_supported, sample.n_unverified) == (25, 24, 0)
    for mode in MODES:
        (r,) = score_results([sample], mode=mode).responses
        assert (r.k, r.precision, r.recall) == (25.0, 24 / 25, 24 / 25)
    # Two of its verdicts unreadable: the released code counts them as not supported
    # (P = 22/25); our default leaves the response out rather than rescore it on 23.
    for c in sample.claims[:2]:
        c.verdict = Verdict("unparsed", "The claim is supported.", False)
    (ref,) = score_results([sample], fixed_k=25, mode="reference").responses
    assert (ref.precision, ref.f1) == (22 / 25, pytest.approx(22 / 25))
    table = score_results([sample], fixed_k=25)
    assert table.responses[0].incomplete and table.rows[0].veriscore is None


LABELS = ["supported", "unsupported", "contradicted", "unparsed", "error"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(LABELS), max_size=6), st.integers(0, 8), st.booleans()),
        max_size=8,
    ),
    st.sampled_from(MODES),
    st.sampled_from(["veriscore", "verifastscore"]),
)
def test_responses_counted_from_their_labels_score_as_their_results(
    responses: list[tuple[list[str], int, bool]], mode: str, extractor: str
) -> None:
    """The report scores stored verdicts as `Counted` responses: each scores as the
    ResponseResult with those claims (the labelled first, the rest never verified)."""
    results, counted = [], []
    for i, (labels, n_claims, abstained) in enumerate(responses):
        r = result(f"r{i}", "AB"[i % 2], "xy"[i % 3 % 2], labels, abstained)
        r.extractor = extractor
        r.claims += [ClaimResult(Claim("c", 0, "s")) for _ in range(n_claims - len(labels))]
        results.append(r)
        who = (r.id, r.model, r.domain, abstained, extractor)
        counted.append(Counted.of_labels(who, labels, n_claims))
    assert score_results(counted, mode=mode) == score_results(results, mode=mode)
