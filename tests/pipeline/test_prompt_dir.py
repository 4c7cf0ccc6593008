"""--prompt-dir: the reference implementation's templates, read at run time from
../shared/peer-data/veriscore/prompt/, give the prompts the reference code sent."""

from __future__ import annotations

import json
import shutil
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.prompts.extraction import SYSTEM as EXTRACTION_SYSTEM
from pipeline.prompts.folder import load_prompt_dir, reference_evidence
from pipeline.types import Evidence, Window

from .conftest import PEER_DATA
from .test_cli import cli, endpoints, read, write_input

VERISCORE = PEER_DATA / "veriscore"
PROMPT_DIR = VERISCORE / "prompt"


def jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def recorded() -> list[tuple[dict[str, str], dict[str, str]]]:
    prompts = jsonl(VERISCORE / "extraction_prompts_ee40f6d.jsonl")
    calls = jsonl(VERISCORE / "extraction_cache_ee40f6d.jsonl")
    assert len(prompts) == len(calls) == 140
    for prompt, call in zip(prompts, calls, strict=True):
        assert prompt["raw_output"] == call["raw_output"]  # the two files are line by line
    return list(zip(prompts, calls, strict=True))


def render(folder: Path, call: dict[str, str]) -> str:
    # The reference split sentences with spaCy; its windows are taken as recorded.
    window = Window(0, call["sentence"], call["snippet"])
    system, user = load_prompt_dir(str(folder)).extraction_messages(
        window, qa=bool(call["question"])
    )
    assert system == {"role": "system", "content": EXTRACTION_SYSTEM}
    return user["content"]


def test_the_recorded_prompts_differ_from_the_shared_template_only_in_its_demo_text() -> None:
    """Everything the fields and our rendering produce matches all 140 recorded prompts
    character for character. The fixed demo text before {snippet} is one and the same in
    all 140 and differs from the shared template file in 8 characters: the recording was
    made with a copy that had 4 trailing spaces and no backslash before 4 quotes."""
    template = (PROMPT_DIR / "extraction_qa_template.txt").read_text(encoding="utf-8")
    head = template.split("{snippet}")[0]
    heads = set()
    for prompt, call in recorded():
        tail = render(PROMPT_DIR, call)[len(head) :]
        assert prompt["prompt"].endswith(tail)
        heads.add(prompt["prompt"][: -len(tail)])
    (recorded_head,) = heads
    changes = [
        (op, head[i1:i2], recorded_head[j1:j2], head[i2 : i2 + 1])
        for op, i1, i2, j1, j2 in SequenceMatcher(
            None, head, recorded_head, autojunk=False
        ).get_opcodes()
        if op != "equal"
    ]
    assert sorted(changes) == sorted(
        [("insert", "", " ", "\n")] * 4 + [("delete", "\\", "", '"')] * 4
    )


def test_the_140_recorded_extraction_prompts_render_character_for_character(
    tmp_path: Path,
) -> None:
    # The shared templates with the demo text the recording was made with (taken from
    # the recording itself): then every prompt is the recorded one, 140 of 140.
    template = (PROMPT_DIR / "extraction_qa_template.txt").read_text(encoding="utf-8")
    head, rest = template.split("{snippet}", 1)
    pairs = recorded()
    first_prompt, first_call = pairs[0]
    tail = render(PROMPT_DIR, first_call)[len(head) :]
    folder = tmp_path / "prompt"
    shutil.copytree(PROMPT_DIR, folder)
    (folder / "extraction_qa_template.txt").write_text(
        first_prompt["prompt"][: -len(tail)] + "{snippet}" + rest, encoding="utf-8"
    )
    same = sum(render(folder, call) == prompt["prompt"] for prompt, call in pairs)
    assert same == 140


def reference_verification_prompt(claim: str, evidence: list[Evidence], mode: str) -> str:
    """What the reference code (veriscore/claim_verifier.py) builds, step by step, from
    the shared instruction template and the nine demos."""
    name = {
        "binary": "verification_instruction_binary.txt",
        "ternary": "verification_instruction_trinary.txt",
    }[mode]
    template = (PROMPT_DIR / name).read_text(encoding="utf-8")
    fields = []
    for demo in jsonl(VERISCORE / "few_shot_examples.jsonl"):
        label = demo["human_label"]
        if mode == "binary":
            label = "Supported." if label == "support" else "Unsupported."
        fields += [demo["claim"], demo["search_result"], label]
    results = ""
    for n, e in enumerate(evidence, start=1):
        results += f"Search result {n}\nTitle: {e.title}\nLink: {e.link}\nContent: {e.snippet}\n\n"
    task = f"Your task:\n\nClaim: {claim}\n\n{results.strip()}\n\nYour decision:"
    return f"{template.format(*fields)}\n\n{task}"


@pytest.mark.parametrize("mode", ["binary", "ternary"])
def test_the_verification_prompt_is_the_reference_one(mode: str) -> None:
    evidence = [
        Evidence(
            1,
            "Danube - Wikipedia",
            "The Danube rises in the Black Forest.",
            "https://en.wikipedia.org/wiki/Danube",
        ),
        Evidence(
            2, "Black Sea", "The Danube flows into the Black Sea.", "https://example.org/black-sea"
        ),
    ]
    claim = "The Danube rises in the Black Forest."
    system, user = load_prompt_dir(str(PROMPT_DIR)).verification_messages(
        claim, evidence, mode=mode
    )
    assert user["content"] == reference_verification_prompt(claim, evidence, mode)
    assert system["content"].startswith("You are a helpful assistant who can judge whether")
    assert reference_evidence([]) == ""


def test_the_cli_sends_the_reference_prompts_with_prompt_dir(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=1)
    out = tmp_path / "out"
    args = ["run", str(src), "--out", str(out), *endpoints(fake_llm, fake_serper, tmp_path)]
    cli(*args, "--prompt-dir", str(PROMPT_DIR))
    template = (PROMPT_DIR / "extraction_qa_template.txt").read_text(encoding="utf-8")
    head = template.split("{snippet}")[0]
    users = [r["body"]["messages"][-1]["content"] for r in fake_llm.requests]
    extraction = [u for u in users if u.startswith(head)]
    assert extraction and all(u.endswith("\nFacts:") for u in extraction)
    verification = [u for u in users if u.endswith("Your decision:")]
    assert verification and all("###Unsupported.###" in u for u in verification)
    record = read(out / "verification_mixed.jsonl")[0]
    assert record["pipeline"]["prompt_version"].startswith("dir:prompt:")
    assert any(record["all_claims"] for record in read(out / "claims_mixed.jsonl"))


def test_a_bad_prompt_dir_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    proc = cli(
        "run",
        str(write_input(tmp_path / "x.jsonl", 0)),
        "--prompt-dir",
        str(tmp_path / "p"),
        check=False,
    )
    assert proc.returncode == 2
    assert "extraction_qa_template.txt is missing" in proc.stderr
