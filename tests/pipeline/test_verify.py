from __future__ import annotations

import pytest

from pipeline.prompts.verification import demo_label, demos, verification_messages
from pipeline.types import Evidence
from pipeline.verify import parse_verdict, to_verdict


@pytest.mark.parametrize(
    ("raw", "mode", "label"),
    [
        ("###Supported.###", "binary", "supported"),
        ("###Unsupported.###", "binary", "unsupported"),
        ("### Unsupported ###", "binary", "unsupported"),
        ("###Not supported.###", "binary", "unsupported"),
        ("###Contradicted.###", "ternary", "contradicted"),
        ("###Inconclusive.###", "ternary", "inconclusive"),
        ("###Contradicted.###", "binary", "unsupported"),
        ("###Inconclusive###", "binary", "unsupported"),
        # reasoning first, naming other labels on the way: the final mark wins
        (
            "Not ###Supported### by result 2; result 3 says otherwise.\n\n###Contradicted.###",
            "ternary",
            "contradicted",
        ),
        ("Result 1 confirms the date.\nYour decision: ###Supported.###", "binary", "supported"),
        ("###**Supported**###", "binary", "supported"),
        ("###Supported.", "binary", "supported"),
        ("Decision: Unsupported", "binary", "unsupported"),
        ("The evidence is thin.\nInconclusive.", "ternary", "inconclusive"),
    ],
)
def test_it_parses_verdicts(raw: str, mode: str, label: str) -> None:
    assert parse_verdict(raw, mode) == label


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ("", "binary"),
        ("I cannot tell.", "binary"),
        ("The claim seems supported but maybe not.", "binary"),
        ("###Maybe###", "binary"),
        ("###Unsupported###", "ternary"),  # not a ternary label
        ("<html>garbage</html>", "ternary"),
    ],
)
def test_unclear_answers_are_unparsed_not_unsupported(raw: str, mode: str) -> None:
    assert parse_verdict(raw, mode) is None
    verdict = to_verdict(raw, mode)
    assert verdict.label == "unparsed" and not verdict.parsed and verdict.raw_output == raw


def test_demos_are_the_nine_human_labelled_examples() -> None:
    labels = [d["human_label"] for d in demos()]
    assert sorted(labels) == ["Contradicted."] * 3 + ["Inconclusive."] * 3 + ["Supported."] * 3


def test_binary_mode_keeps_supported_demos_supported() -> None:
    assert [demo_label(d["human_label"], "binary") for d in demos()].count("Supported.") == 3
    text = verification_messages("X is Y.", [], mode="binary")[1]["content"]
    assert text.count("###Supported.###") == 3 and text.count("###Unsupported.###") == 6
    assert "Contradicted.###" not in text


def test_ternary_prompt_has_all_three_labels_and_the_evidence() -> None:
    ev = [Evidence(1, "Title A", "Snippet A", "https://a.example")]
    text = verification_messages("X is Y.", ev, mode="ternary")[1]["content"]
    assert text.count("###Contradicted.###") == 3
    assert text.endswith(
        "Your task:\n\nClaim: X is Y.\n\nSearch result 1\nTitle: Title A\n"
        "Link: https://a.example\nContent: Snippet A\n\nYour decision:"
    )
