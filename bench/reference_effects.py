"""What each way our default mode differs from the released VeriScore does to VERIScore.

    python bench/reference_effects.py                       # 50 ChatGPT FActScore bios
    python bench/reference_effects.py --input FILE --responses N

Runs the same responses through our default mode, the reference mode (--reference
veriscore, with the stand-in spaCy splitter), and the default mode with one difference
switched to the released behaviour at a time, all against the project's fake provider and
search (pipeline.fakes: deterministic answers, no model; its verifier answers in every
shape of pipeline.fakes.VARIED: label first, reasoning first, text after the label, no
label). Then the reference mode with one of the released rules switched back to ours at a
time: our verdict parser, empty responses abstained, claimless responses scored 0 in the
means. Prints VERIScore, mean claims and precision per variant, and the responses scored
and claimless. With --empty (default) two responses are added, one empty and one of
whitespace only. The figures measure how the pipelines differ on the same answers; a
real model answers differently (see docs/pipeline/reference-mode.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import run, verify  # noqa: E402
from pipeline.fakes import FakeOpenAI, FakeSerper  # noqa: E402
from pipeline.parity import factscore_inputs  # noqa: E402
from pipeline.run import ClientConfig, PipelineConfig, build_clients, run_responses_sync  # noqa: E402
from pipeline.score import score_results  # noqa: E402
from pipeline.split import SPACY_STANDIN  # noqa: E402
from pipeline.types import ResponseInput  # noqa: E402

PEER = Path(os.environ.get("PEER_DATA") or ROOT.parent / "shared" / "peer-data")
PROMPTS = str(PEER / "veriscore" / "prompt")


def variants() -> dict[str, PipelineConfig]:
    default = PipelineConfig()
    return {
        "default mode": default,
        "reference mode (--reference veriscore)": PipelineConfig(
            reference="veriscore", prompt_dir=PROMPTS, splitter=SPACY_STANDIN
        ),
        "default, 10 results per claim (released --search_res_num)": replace(
            default, evidence_in_prompt=10
        ),
        "default, ternary labels (released --label_n 3)": replace(default, label_mode="ternary"),
        "default, spaCy splitting (line by line)": replace(default, splitter=SPACY_STANDIN),
        "default, released templates (--prompt-dir)": replace(default, prompt_dir=PROMPTS),
    }


# The reference mode with one released rule switched back to ours (patched for the run).
OURS_IN_REFERENCE = {
    "reference, our verdict parser (last ###label###)": (verify, "released_verdict"),
    "reference, empty responses abstained": (run, "is_abstained"),
}


@contextmanager
def ours(module: object, name: str) -> Iterator[None]:
    original = getattr(module, name)
    replacement = {
        "released_verdict": verify.parse_verdict,
        "is_abstained": lambda response, reference=None: original(response),
    }[name]
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, help="VeriScore-input JSONL (default: FActScore bios)")
    p.add_argument("--responses", type=int, default=50)
    p.add_argument("--verdicts", default="varied", help="the fake verifier's answers")
    p.add_argument("--no-empty", action="store_true", help="no empty responses added")
    args = p.parse_args()
    if args.input:
        rows = [json.loads(x) for x in args.input.read_text().splitlines() if x.strip()]
    else:
        rows = factscore_inputs(PEER / "factscore_labeled" / "ChatGPT.jsonl", args.responses)
    inputs = [
        ResponseInput(
            id=str(n),
            question=r.get("question") or None,
            response=r["response"],
            model=r["model"],
            domain=r["prompt_source"],
        )
        for n, r in enumerate(rows[: args.responses])
    ]
    if not args.no_empty:
        for text in ("", " \n "):
            inputs.append(replace(inputs[0], id=str(len(inputs)), response=text))
    print(f"{len(inputs)} responses; the fake provider and search (pipeline.fakes)")
    print(
        f"{'variant':<62} {'VERIScore':>9} {'claims':>7} {'P':>6} {'calls':>6} "
        f"{'prompt kchars':>13} {'n':>3} {'claimless':>9}   (calls and prompt size per response)"
    )
    runs = [(name, config, None) for name, config in variants().items()]
    reference = variants()["reference mode (--reference veriscore)"]
    runs += [(name, reference, patch) for name, patch in OURS_IN_REFERENCE.items()]
    runs.append(("reference, claimless responses scored 0 in the means", reference, None))
    for name, config, patch in runs:
        with (
            FakeOpenAI(verdicts=args.verdicts) as llm,
            FakeSerper() as serper,
            ours(*patch) if patch else contextmanager(lambda: iter([None]))(),
        ):
            clients = build_clients(
                ClientConfig(
                    base_url=llm.base_url,
                    api_key="fake",
                    model="gpt-4o-mini",
                    serper_api_key="fake",
                    serper_url=serper.url,
                    cache_path=None,
                )
            )
            results = run_responses_sync(
                inputs, config=config, llm=clients.llm, searcher=clients.searcher
            )
        table = score_results(results, mode=config.mode)
        calls = len(llm.requests) / len(inputs)
        chars = sum(len(json.dumps(r["body"]["messages"])) for r in llm.requests) / len(inputs)
        for row in table.rows:
            veriscore, n = row.veriscore or 0.0, row.responses
            if name.endswith("scored 0 in the means"):  # ours: a claimless response scores 0
                veriscore, n = veriscore * n / (n + row.claimless), n + row.claimless
            print(
                f"{name:<62} {veriscore:>9.1f} {row.mean_claims or 0:>7.1f} "
                f"{row.precision or 0:>6.3f} {calls:>6.1f} {chars / 1000:>13.0f} {n:>3} "
                f"{row.claimless:>9}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
