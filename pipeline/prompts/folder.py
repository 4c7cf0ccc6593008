"""Prompts from a folder of templates read at run time (`--prompt-dir`).

The folder has the reference VeriScore implementation's layout, and its templates are
rendered the way the reference code renders them, so pointing `--prompt-dir` at that
code's `prompt/` folder sends what the reference code sends:

- extraction_qa_template.txt, extraction_non_qa_template.txt: `str.format` with
  `snippet` (the window, with <SOS>...<EOS>) and `sentence` (the focused sentence);
- verification_instruction_binary.txt, verification_instruction_trinary.txt: positional
  `{}` fields filled with (claim, search results, label) for each demo, followed by
  "\\n\\nYour task:\\n\\nClaim: ...\\n\\n<search results>\\n\\nYour decision:";
- few_shot_examples.jsonl (optional): the demos {claim, search_result, human_label};
  without it, VeriScore's nine demos that come with the pipeline.

As in the reference code, search results read "Search result n / Title / Link / Content",
and in binary mode a demo is labelled "Supported." only when its human label is "support",
which none of the nine is: every binary demo says "Unsupported." there. Our own prompts
(pipeline/prompts/extraction.py, verification.py) label them as the paper says.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.prompts import extraction, verification
from pipeline.types import Evidence, Window

EXTRACTION = {True: "extraction_qa_template.txt", False: "extraction_non_qa_template.txt"}
VERIFICATION = {
    "binary": "verification_instruction_binary.txt",
    "ternary": "verification_instruction_trinary.txt",
}
DEMOS = "few_shot_examples.jsonl"
TASK = "Your task:\n\nClaim: {claim}\n\n{search_results}\n\nYour decision:"
# The released code's other paths (read when present; a path that needs a missing one is
# refused naming it): its fine-tuned checkpoints' prompts (claim_extractor.py,
# claim_verifier.py with use_external_*_model) and its Claude verification templates.
ALPACA_EXTRACTION = "extraction_alpaca_template.txt"
ALPACA_VERIFICATION = "verification_alpaca_template.txt"
NO_DEMO = "verification_instruction_binary_no_demo.txt"
CLAUDE = {
    "binary": "verification_instruction_claude_binary.txt",
    "ternary": "verification_instruction_claude_trinary.txt",
}
OPTIONAL = (ALPACA_EXTRACTION, ALPACA_VERIFICATION, NO_DEMO, *CLAUDE.values())
CLAUDE_TASK = (
    "Your task:\n\n{search_results}\n\nClaim: {claim}\n\nTask: Given the search results "
    "above, is the claim supported or unsupported? Mark your decision with ### signs.\n\n"
    "Your decision:"
)  # claim_verifier.py's closing instruction for "claude" models, word for word


@dataclass(frozen=True)
class PromptDir:
    path: Path
    templates: dict[str, str]  # file name -> text, as read at start
    demos: tuple[dict[str, str], ...]

    @property
    def version(self) -> str:
        """Names the folder's content, so results say exactly which prompts made them."""
        digest = hashlib.sha256()
        for name in sorted(self.templates):
            digest.update(f"{name}\0{self.templates[name]}\0".encode())
        digest.update(json.dumps(self.demos, sort_keys=True).encode())
        return f"dir:{self.path.name}:{digest.hexdigest()[:10]}"

    def extraction_messages(self, window: Window, *, qa: bool) -> list[dict[str, str]]:
        user = self.templates[EXTRACTION[qa]].format(
            snippet=window.snippet, sentence=window.sentence
        )
        return [
            {"role": "system", "content": extraction.SYSTEM},  # the reference's, word for word
            {"role": "user", "content": user},
        ]

    def verification_messages(
        self, claim: str, evidence: list[Evidence], *, mode: str
    ) -> list[dict[str, str]]:
        fields: list[str] = []
        for d in self.demos:
            label = d["human_label"]
            if mode == "binary":
                label = "Supported." if label == "support" else "Unsupported."
            fields += [d["claim"], d["search_result"], label]
        shots = self.templates[VERIFICATION[mode]].format(*fields)
        task = TASK.format(claim=claim, search_results=reference_evidence(evidence))
        return [
            {"role": "system", "content": verification.SYSTEM[mode]},
            {"role": "user", "content": f"{shots}\n\n{task}"},
        ]

    def template(self, name: str) -> str:
        if name not in self.templates:
            raise ValueError(f"--prompt-dir {self.path}: {name} is missing (this path needs it)")
        return self.templates[name]

    def alpaca_extraction_prompt(self, snippet: str) -> str:
        """The fine-tuned extractor's prompt string: `alpaca_prompt.format(snippet, "")`."""
        return self.template(ALPACA_EXTRACTION).format(snippet, "")

    def alpaca_verification_prompt(self, claim: str, evidence: list[Evidence]) -> str:
        """The fine-tuned verifier's prompt string: the no-demo binary instruction whatever
        the label mode, then `Claim: ...` and the results, in its Llama-3 template."""
        user = f"Claim: {claim.strip()}\n\n{reference_evidence(evidence)}"
        return self.template(ALPACA_VERIFICATION).format(self.template(NO_DEMO), user)

    def claude_verification_prompt(self, claim: str, evidence: list[Evidence], *, mode: str) -> str:
        """The Claude path's one user message: the Claude templates' demos in the order
        (search results, claim, label), then its own closing instruction."""
        fields: list[str] = []
        for d in self.demos:
            label = d["human_label"]
            if mode == "binary":
                label = "Supported." if label == "support" else "Unsupported."
            fields += [d["search_result"], d["claim"], label]
        shots = self.template(CLAUDE[mode]).format(*fields)
        task = CLAUDE_TASK.format(claim=claim, search_results=reference_evidence(evidence))
        return f"{shots}\n\n{task}"


def reference_evidence(evidence: list[Evidence]) -> str:
    return "".join(
        f"Search result {i}\nTitle: {e.title.strip()}\nLink: {e.link.strip()}\n"
        f"Content: {e.snippet.strip()}\n\n"
        for i, e in enumerate(evidence, start=1)
    ).strip()


@functools.cache
def load_prompt_dir(path: str) -> PromptDir:
    """Read and check the folder once; a missing file or a template that does not take
    the fields it is given is an error that names the file."""
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"--prompt-dir {path}: no such folder")
    templates = {}
    for name in [*EXTRACTION.values(), *VERIFICATION.values()]:
        file = folder / name
        if not file.is_file():
            raise ValueError(
                f"--prompt-dir {path}: {name} is missing (the folder needs "
                f"{', '.join([*EXTRACTION.values(), *VERIFICATION.values()])})"
            )
        templates[name] = file.read_text(encoding="utf-8")
    for name in OPTIONAL:
        if (folder / name).is_file():
            templates[name] = (folder / name).read_text(encoding="utf-8")
    demo_file = folder / DEMOS
    if demo_file.is_file():
        lines = demo_file.read_text(encoding="utf-8").splitlines()
        demos = tuple(json.loads(line) for line in lines if line.strip())
    else:
        demos = tuple(verification.demos())
    prompts = PromptDir(folder, templates, demos)
    probe = Window(0, "s", "<SOS>s<EOS>")
    checks: list[tuple[str, Callable[[], object]]] = [
        (EXTRACTION[True], lambda: prompts.extraction_messages(probe, qa=True)),
        (EXTRACTION[False], lambda: prompts.extraction_messages(probe, qa=False)),
        (VERIFICATION["binary"], lambda: prompts.verification_messages("c", [], mode="binary")),
        (VERIFICATION["ternary"], lambda: prompts.verification_messages("c", [], mode="ternary")),
    ]
    for name, render in checks:
        try:
            render()
        except (KeyError, IndexError, ValueError) as e:
            raise ValueError(
                f"--prompt-dir {path}: {name} does not render ({type(e).__name__}: {e}); "
                "extraction templates take {snippet} and {sentence}, verification templates "
                f"three {{}} per demo ({len(demos)} demos)"
            ) from None
    return prompts
