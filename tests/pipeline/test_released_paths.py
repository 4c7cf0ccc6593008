"""The released VeriScore's checkpoint and Claude paths (pipeline/released.py): the two
APIs' clients against the fake (retries, refusals, cache, where the key goes), the prompt
strings and parsing rules, and the CLI's checks. Parity with the released code itself:
tests/pipeline/test_reference_parity_paths.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline import released
from pipeline.__main__ import main
from pipeline.cache import Cache
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.llm import ChatResult, LLMClient, LLMError
from pipeline.prompts.folder import load_prompt_dir
from pipeline.run import PipelineConfig
from pipeline.types import SUPPORTED, UNPARSED, Evidence
from tests.requires import unavailable

from .conftest import PEER_DATA

PROMPTS = PEER_DATA / "veriscore" / "prompt"
SENT = "spacy:sentencizer"


@pytest.fixture
def prompt_dir() -> Path:
    if not PROMPTS.is_dir():
        unavailable(f"the shared peer data is missing ({PEER_DATA})")
    return PROMPTS


def call(llm: LLMClient, api: str, prompt: str, **kw: Any) -> ChatResult:
    async def go() -> ChatResult:
        try:
            if api == "completions":
                return await llm.complete(prompt, **kw)
            return await llm.anthropic(prompt, **kw)
        finally:
            await llm.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("api", ["completions", "anthropic"])
def test_each_api_sends_its_body_retries_faults_and_caches(api: str, tmp_path: Path) -> None:
    with FakeOpenAI(fault_rate=0.5, seed=3, faults=("429", "500")) as server:
        base = server.base_url if api == "completions" else server.url
        cache = Cache(tmp_path / "c.sqlite")
        llm = LLMClient(base_url=base, api_key="sk-op", model="m", backoff=0.0, max_retries=8,
                        cache=cache)  # fmt: skip
        first = call(llm, api, "Say OK", max_tokens=500)
        assert first.text == "OK" and not first.cached
        sent = [r for r in server.requests if not r["fault"]][-1]
        if api == "completions":
            assert sent["path"] == "/v1/completions"
            assert sent["body"] == {"model": "m", "prompt": "Say OK", "max_tokens": 500,
                                    "temperature": 0}  # fmt: skip
        else:
            assert sent["path"] == "/v1/messages"
            user = [{"role": "user", "content": "Say OK"}]
            assert sent["body"] == {"max_tokens": 500, "model": "m", "temperature": 0,
                                    "messages": user}  # fmt: skip
        calls = len(server.requests)
        again = call(llm, api, "Say OK", max_tokens=500)
        assert again.cached and len(server.requests) == calls
        # A named call is its own (the released checkpoint path: no cache between calls).
        if api == "completions":
            call(llm, api, "Say OK", max_tokens=500, distinct="r1/sentence/0")
            assert len(server.requests) > calls


def test_a_refusal_is_not_retried() -> None:
    with FakeOpenAI() as server:
        # The Messages API's base URL has no /v1 (as the anthropic SDK's): with it, a 404.
        llm = LLMClient(base_url=server.base_url, api_key="k", model="claude-x", max_retries=5)
        with pytest.raises(LLMError, match="HTTP 404"):
            call(llm, "anthropic", "Say OK")
        assert len(server.requests) == 1
        llm = LLMClient(base_url=server.base_url, api_key="k", model="m", max_retries=5)
        with pytest.raises(LLMError, match="HTTP 400"):
            call(llm, "completions", "")
        assert len(server.requests) == 2


def test_the_checkpoint_prompts_are_the_released_strings(prompt_dir: Path) -> None:
    prompts = load_prompt_dir(str(prompt_dir))
    template = (prompt_dir / "extraction_alpaca_template.txt").read_text()
    windows = released.local_windows(" A is B. C is D. A is B.", "Q? ", ["A is B.", "C is D."])
    assert (
        windows[0].snippet
        == "Questions:\nQ?\nResponse:\n<SOS>A is B.<EOS> C is D. <SOS>A is B.<EOS>"
    )
    assert released.local_windows("A. B.", None, ["B."])[0].snippet == "A. <SOS>B.<EOS>"
    prompt = prompts.alpaca_extraction_prompt(windows[1].snippet)
    assert prompt == template.format(windows[1].snippet, "") and prompt.endswith("### Response:\n")
    evidence = [Evidence(1, " T ", " S ", " L ")]
    for mode in ("binary", "ternary"):  # the no-demo binary instruction whatever the mode
        verify = prompts.alpaca_verification_prompt(" c ", evidence)
        no_demo = (prompt_dir / "verification_instruction_binary_no_demo.txt").read_text()
        user = "Claim: c\n\nSearch result 1\nTitle: T\nLink: L\nContent: S"
        assert verify == (prompt_dir / "verification_alpaca_template.txt").read_text().format(
            no_demo, user
        )
        claude = prompts.claude_verification_prompt("c", evidence, mode=mode)
        assert claude.endswith(
            "Your task:\n\nSearch result 1\nTitle: T\nLink: L\nContent: S\n\nClaim: c\n\n"
            "Task: Given the search results above, is the claim supported or unsupported? "
            "Mark your decision with ### signs.\n\nYour decision:"
        )


def test_outputs_are_read_as_released() -> None:
    prompt = "...### Input:\nx\n\n### Response:\n"
    assert released.local_claims(prompt, "A is B.\n\n- C is D.</s>") == ["A is B.", "- C is D."]
    assert released.local_claims(prompt, "A.\nNo verifiable claim.") == []
    assert released.local_claims(prompt, "Note: x\n1. A") == ["1. A"]
    head = "<|start_header_id|>assistant<|end_header_id|>\n\n"
    assert released.local_result(head, " supported<|eot_id|>") == "supported"
    assert released.local_result(head, "###Supported.###") == "###Supported.###"
    assert released.api_result("  ###Supported.### because") == "supported"
    assert (
        released.api_result("The claim is supported. ###Supported###") == "the claim is supported"
    )
    assert released.to_verdict("supported", "", "binary").label == SUPPORTED
    assert released.to_verdict("Supported", "", "binary").label == UNPARSED
    assert released.to_verdict("inconclusive", "", "ternary").label == "inconclusive"


def test_the_paths_need_the_reference_mode_and_their_templates(
    prompt_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="needs --reference veriscore"):
        PipelineConfig(extraction_api="completions")
    with pytest.raises(ValueError, match="unknown verification API"):
        PipelineConfig(
            reference="veriscore", prompt_dir=str(prompt_dir), splitter=SENT, verification_api="x"
        )
    partial = tmp_path / "prompt"
    partial.mkdir()
    for f in prompt_dir.iterdir():
        if "alpaca" not in f.name:
            (partial / f.name).write_text(f.read_text())
    (partial / "few_shot_examples.jsonl").write_text(
        (PEER_DATA / "veriscore" / "few_shot_examples.jsonl").read_text()
    )
    with pytest.raises(ValueError, match="extraction_alpaca_template.txt is missing"):
        PipelineConfig(
            reference="veriscore", prompt_dir=str(partial), splitter=SENT,
            extraction_api="completions",
        )  # fmt: skip
    PipelineConfig(
        reference="veriscore", prompt_dir=str(partial), splitter=SENT, verification_api="anthropic"
    )


def test_a_mixed_run_sends_each_stage_to_its_endpoint(prompt_dir: Path, tmp_path: Path) -> None:
    """Extraction by a served checkpoint, verification by Claude at another endpoint, each
    with its own key."""
    data = tmp_path / "in.jsonl"
    row = {"question": "Who is A?", "response": "Ada Lovelace was born in London in 1815.",
           "model": "m", "prompt_source": "d"}  # fmt: skip
    data.write_text(json.dumps(row) + "\n")
    folder = tmp_path / "prompt"
    folder.mkdir()
    for f in prompt_dir.iterdir():
        (folder / f.name).write_text(f.read_text())
    (folder / "few_shot_examples.jsonl").write_text(
        (PEER_DATA / "veriscore" / "few_shot_examples.jsonl").read_text()
    )
    with (
        FakeOpenAI() as local,
        FakeOpenAI(verdicts="label-first") as claude,
        FakeSerper() as serper,
    ):
        status = main([
            "run", str(data), "--reference", "veriscore", "--prompt-dir", str(folder),
            "--splitter", "spacy:sentencizer", "--model", "SYX/mistral_based_claim_extractor",
            "--verification-model", "claude-3-5-sonnet-20240620",
            "--extraction-api", "completions", "--verification-api", "anthropic",
            "--base-url", local.base_url, "--api-key", "local-key",
            "--verification-base-url", claude.url, "--verification-api-key", "claude-key",
            "--serper-url", serper.url, "--serper-key", "s", "--no-progress",
            "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "out"),
        ])  # fmt: skip
    assert status == 0
    assert {r["path"] for r in local.requests} == {"/v1/completions"}
    assert {r["path"] for r in claude.requests} == {"/v1/messages"}
    assert all(r["body"]["max_tokens"] == 1000 for r in local.requests + claude.requests)


def test_the_cli_refuses_a_path_outside_the_reference_mode_and_a_batch_without_chat(
    prompt_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"response": "A is B.", "model": "m", "prompt_source": "d"}) + "\n")
    common = ["run", str(data), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c")]
    assert main([*common, "--extraction-api", "completions"]) == 2
    assert "needs --reference veriscore" in capsys.readouterr().err
    reference = ["--reference", "veriscore", "--prompt-dir", str(prompt_dir), "--splitter", SENT]
    apis = ["--extraction-api", "completions", "--verification-api", "anthropic"]
    assert main([*common, *reference, *apis, "--batch"]) == 2
    assert "--batch sends chat completions only" in capsys.readouterr().err
