"""The released VeriScore against our --reference veriscore on any VeriScore-input file.

    python bench/reference_parity.py --input data.jsonl [--responses N]
    python bench/reference_parity.py --input data.jsonl --quick   # 2 responses, 10 ms

Builds or reuses the released package's virtualenv (scripts/veriscore-venv), runs the
released CLI and our reference mode on the first N responses, each against its own fake
provider and search with the same latency per call (300 ms, as bench/pipeline_throughput.py),
and prints `requests compared: N, differences: D` (chat and search requests, whole
bodies), the first differences as unified diffs, how many responses' (supported, claims)
differ, how many of the figures the released code prints (K per domain, F1@K per domain
and model) differ, the wall time of both sides and their ratio. Both fakes' verifiers
answer in every shape of pipeline.fakes.VARIED (--verdicts). Both sides split sentences
with the same stand-in spaCy pipeline (see scripts/veriscore-venv). Exit status 0 only
when nothing differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import parity  # noqa: E402
from pipeline.split import SPACY_STANDIN  # noqa: E402

PEER = Path(os.environ.get("PEER_DATA") or ROOT.parent / "shared" / "peer-data")
TEMPLATES = PEER / "veriscore"
FIELDS = ("question", "response", "model", "prompt_source")


def read(path: Path, n: int) -> list[dict[str, str]]:
    """The first n lines; each needs a string `response`, `model` and `prompt_source`."""
    inputs = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if len(inputs) == n:
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"{path}:{number}: not JSON ({e})") from None
            for name in FIELDS[1:]:
                if not isinstance(row.get(name), str):
                    raise SystemExit(f"{path}:{number}: field {name!r} missing or not a string")
            inputs.append({k: str(row.get(k) or "") for k in FIELDS})
    if not inputs:
        raise SystemExit(f"{path}: no responses")
    return inputs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True, type=Path, help="VeriScore-input JSONL")
    p.add_argument("--responses", type=int, default=10)
    p.add_argument("--latency", type=float, default=0.3, help="seconds per call")
    p.add_argument("--label-n", type=int, choices=[2, 3], default=3)
    p.add_argument(
        "--model", default="gpt-4o-mini", help="must contain 'gpt' for the released code"
    )
    p.add_argument("--templates", type=Path, default=TEMPLATES, help="prompt/ and demos")
    p.add_argument("--show", type=int, default=3, help="differences printed")
    p.add_argument("--concurrency", type=int, default=64, help="our calls in flight")
    p.add_argument("--quick", action="store_true", help="2 responses, 10 ms: a smoke run")
    p.add_argument(
        "--verdicts", default=parity.VERDICTS, help="the fake verifier's style (pipeline.fakes)"
    )
    args = p.parse_args()
    if args.quick:
        args.responses, args.latency = 2, 0.01
    inputs = read(args.input, args.responses)
    python = parity.venv_python(build=True)
    if python is None:
        print(parity.why_no_venv(), file=sys.stderr)
        return 2
    options = dict(
        templates=args.templates,
        model=args.model,
        label_n=args.label_n,
        latency=args.latency,
        verdicts=args.verdicts,
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        released = parity.run_released(python, inputs, work / "released", **options)
        ours = parity.run_ours(
            inputs, work / "ours", splitter=SPACY_STANDIN, concurrency=args.concurrency, **options
        )
    result = parity.compare(released, ours, inputs)
    print(f"{len(inputs)} responses from {args.input}, {args.latency * 1000:.0f} ms per call")
    print(parity.report(result, show=args.show))
    ratio = released.seconds / ours.seconds if ours.seconds else float("inf")
    print(f"reference mode is {ratio:.1f}x faster than the released code")
    differ = result.differences or result.score_differences or result.figure_differences
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
