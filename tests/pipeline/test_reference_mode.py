"""--reference veriscore, piece by piece (issue 24 rows 1, 4, 5, 6); the whole of it is
compared with the released package in test_reference_parity.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.extract import plan, reference_dedupe, reference_facts
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.run import PipelineConfig
from pipeline.split import SPACY_STANDIN, reference_windows, splitter
from pipeline.types import SentenceClaims

from .conftest import PEER_DATA
from .test_cli import cli, endpoints, read

VERISCORE = PEER_DATA / "veriscore"
PROMPTS = str(VERISCORE / "prompt")


def reference(**given: Any) -> PipelineConfig:
    return PipelineConfig(reference="veriscore", prompt_dir=PROMPTS, **given)


def test_the_reference_mode_takes_the_released_clis_defaults() -> None:
    config = reference(splitter=SPACY_STANDIN)
    # Row 1: the released CLI passes --search_res_num 10 (the library class says 5).
    assert config.evidence_in_prompt == 10
    assert config.label_mode == "ternary"  # its --label_n 3
    assert config.seed("gpt-4o-mini") == 1130 and config.seed("llama3.1:8b") is None
    assert config.temperature == 0 and isinstance(config.temperature, int)
    # The released code's model is on no registry: without it, a clear error.
    with pytest.raises(ValueError, match="spacy:en_core_web_sm.*--splitter spacy:sentencizer"):
        reference()
    default = PipelineConfig()
    assert (default.evidence_in_prompt, default.label_mode, default.splitter) == (
        5,
        "binary",
        "pysbd",
    )
    assert default.seed("gpt-4o-mini") is None


def test_the_reference_mode_needs_the_templates_folder_and_a_known_splitter() -> None:
    with pytest.raises(ValueError, match="--prompt-dir"):
        PipelineConfig(reference="veriscore")
    with pytest.raises(ValueError, match="unknown splitter"):
        PipelineConfig(splitter="nltk")
    with pytest.raises(ValueError, match="unknown reference"):
        PipelineConfig(reference="factscore", prompt_dir=PROMPTS)


def test_qa_windows_are_the_released_ones_two_spaces_and_all() -> None:
    # Row 4: spaCy over the whole response, "Response:  <SOS>" with two spaces.
    response = "Ada Lovelace was a mathematician. She wrote the first program.\nShe died in 1852."
    sentences = splitter(SPACY_STANDIN)(response)
    assert sentences == [
        "Ada Lovelace was a mathematician.",
        "She wrote the first program.",
        "She died in 1852.",
    ]
    windows = reference_windows(response, "Who was Ada?", sentences)
    assert windows[0].snippet == (
        "Question: Who was Ada?\nResponse:  <SOS>Ada Lovelace was a mathematician.<EOS> "
        "She wrote the first program."
    )
    assert windows[2].snippet.endswith("program. <SOS>She died in 1852.<EOS>")


def test_long_non_qa_windows_repeat_the_lead_sentence_as_released() -> None:
    sentences = [f"Sentence number {n} is here." for n in range(7)]
    windows = reference_windows(" ".join(sentences), None, sentences)
    lead = sentences[0]
    assert windows[0].snippet == f"{lead}  <SOS>{lead}<EOS> {sentences[1]}"
    assert windows[2].snippet.startswith(f"{lead} {lead} {sentences[1]} <SOS>")  # repeated
    assert windows[5].snippet.startswith(f"{lead} {sentences[2]} ")
    short = reference_windows("A b c. D e f.", "", ["A b c.", "D e f."])
    assert short[0].snippet == "<SOS>A b c.<EOS> D e f."


def test_the_140_recorded_windows_are_the_reference_modes() -> None:
    """Row 5: the windows the released code built for the 140 recorded gpt-4 calls, from
    the recorded sentences of each of the 7 responses (the last response's final sentence
    was not recorded; it is read from the last window)."""
    rows = [json.loads(x) for x in (VERISCORE / "extraction_cache_ee40f6d.jsonl").open()]
    responses: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        responses.setdefault(row["question"], []).append(row)
    same = 0
    for question, calls in responses.items():
        sentences = [c["sentence"] for c in calls]
        after = calls[-1]["snippet"].split("<EOS>", 1)[1].strip()
        sentences += [after] if after else []
        windows = reference_windows("", question, sentences)
        same += sum(
            (w.snippet, w.sentence) == (c["snippet"], c["sentence"])
            for w, c in zip(windows, calls, strict=False)
        )
    assert same == 140


def test_claims_are_read_and_deduplicated_as_released() -> None:
    raw = "- Ada was born in 1815.\n- She met Babbage - a mathematician.\n\nNote: none.\n2. X is Y."
    assert reference_facts(raw) == [
        "Ada was born in 1815.",
        "She met Babbage a mathematician.",  # every "- " goes, as there
        "X is Y.",
    ]
    assert reference_facts("Facts:\nNo verifiable claim.") == []
    claims = reference_dedupe(
        [SentenceClaims(0, "s", ["A.", "B."], ""), SentenceClaims(1, "t", ["a.", "A."], "")]
    )
    assert [c.text for c in claims] == ["A.", "B.", "a."]  # exact strings, not normalised


def test_the_reference_plan_renders_the_shared_templates() -> None:
    config = reference(splitter=SPACY_STANDIN)
    calls = plan("One fact here. Another one.", "Q?", "veriscore", config.prompts,
                 reference=splitter(SPACY_STANDIN))  # fmt: skip
    system, user = calls[0][1]
    template = (VERISCORE / "prompt" / "extraction_qa_template.txt").read_text()
    assert user["content"] == template.format(
        snippet="Question: Q?\nResponse:  <SOS>One fact here.<EOS> Another one.",
        sentence="One fact here.",
    )


class TwelveResults(FakeSerper):
    """Serper with twelve results for every query, of which it returns `num`, by default
    ten, as the real one does."""

    def answer(self, path: str, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        organic = [
            {"title": f"Page {i}", "link": f"https://example.org/{i}", "snippet": f"Text {i}."}
            for i in range(1, 13)
        ]
        return 200, {"organic": organic[: int(data.get("num", 10))]}


def test_a_reference_run_sends_ten_results_seed_and_records_its_mode(tmp_path: Any) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(
        json.dumps(
            {
                "question": "Who was Ada Lovelace?",
                "model": "m",
                "prompt_source": "bio",
                "response": "Ada Lovelace was an English mathematician born in London in "
                "1815. She wrote the first computer program.",
            }
        )
        + "\n"  # fmt: skip
    )
    with FakeOpenAI(verdicts="label-first") as llm, TwelveResults() as serper:
        args = endpoints(llm, serper, tmp_path)
        args[args.index("--model") + 1] = "gpt-4o-mini"
        cli("run", str(data), *args, "--reference", "veriscore", "--splitter", SPACY_STANDIN,
            "--prompt-dir", PROMPTS, "--out", str(tmp_path / "out"))  # fmt: skip
    bodies = [r["body"] for r in llm.requests]
    verification = [b for b in bodies if b["messages"][-1]["content"].endswith("Your decision:")]
    assert verification and all(b["seed"] == 1130 and b["max_tokens"] == 1000 for b in bodies)
    for body in verification:
        task = body["messages"][-1]["content"].rsplit("Your task:", 1)[1]
        assert "Search result 10\nTitle: Page 10\nLink: https://example.org/10\n" in task
        assert "Search result 11" not in task
    scores = json.loads(next((tmp_path / "out").glob("scores_*.json")).read_text())
    assert scores["run"]["mode"] == "veriscore"
    assert scores["run"]["splitter"] == SPACY_STANDIN
    assert scores["run"]["templates"].startswith("dir:prompt:")
    assert scores["run"]["package_version"]
    assert read(tmp_path / "out" / "claims_in.jsonl")


def test_a_verifastscore_reference_run_is_the_released_ones(tmp_path: Any) -> None:
    # Row 7: every organic result joined (ours: 5), sampled at 0.7 (ours: 0), and the
    # released score (K = 17, recall = claims / 17) recorded beside ours.
    data = tmp_path / "in.jsonl"
    data.write_text(
        json.dumps({"question": "", "model": "m", "prompt_source": "bio",
                    "response": "Ada Lovelace was an English mathematician born in London in "
                    "1815. Ada Lovelace was an English mathematician born in London in 1815."})
        + "\n"
    )  # fmt: skip
    with FakeOpenAI() as llm, TwelveResults() as serper:
        args = endpoints(llm, serper, tmp_path)
        folder = str(PEER_DATA / "verifastscore")
        cli("run", str(data), *args, "--reference", "verifastscore", "--splitter", SPACY_STANDIN,
            "--prompt-dir", folder, "--out", str(tmp_path / "out"))  # fmt: skip
    (body,) = [r["body"] for r in llm.requests]
    assert (body["temperature"], body["max_tokens"]) == (0.7, 2048)
    assert (
        body["messages"][0]["content"]
        == (PEER_DATA / "verifastscore" / "system_message.txt").read_text()
    )
    evidence = body["messages"][1]["content"].split("\n### Evidence\n", 1)[1]
    assert evidence == "\n".join(f"Text {i}." for i in range(1, 11))  # the repeat searched once
    assert len(serper.requests) == 1
    scores = json.loads(next((tmp_path / "out").glob("scores_*.json")).read_text())
    assert scores["run"]["mode"] == "verifastscore"
    ((group, score),) = scores["verifastscore_k17"].items()
    assert group == "m / bio" and score is not None and 0 <= score <= 1


def test_the_released_verifastscore_score() -> None:
    from pipeline.verifastscore import reference_facts, released_f1

    assert released_f1(17, 17) == 1.0
    assert released_f1(0, 0) == 0.0
    assert released_f1(2, 4) == pytest.approx(2 * 0.5 * (4 / 17) / (0.5 + 4 / 17))
    assert reference_facts("### Facts\nNo verifiable claim.") == []
    assert reference_facts("### Facts\nA: Supported\nB: Unsupported") == [
        ("A", "supported"),
        ("B", "unsupported"),
    ]


def test_the_default_mode_takes_a_named_splitter_line_by_line() -> None:
    from pipeline.split import windows_for

    text = "1. First item. 2. Second item.\nA heading"
    assert [w.sentence for w in windows_for(text, "q")] == [
        "1. First item.",
        "2. Second item.",
        "A heading",
    ]
    # spaCy's rule-based sentencizer cuts after a list number's full stop; lines stay apart.
    assert [w.sentence for w in windows_for(text, "q", SPACY_STANDIN)] == [
        "1.",
        "First item.",
        "2.",
        "Second item.",
        "A heading",
    ]
