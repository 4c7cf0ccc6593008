"""Fixed against adaptive overlap on SYNTHETIC answers with known disagreement rates.

    .venv/bin/python bench/adaptive_overlap.py            # 20,000 items per scenario
    .venv/bin/python bench/adaptive_overlap.py --quick    # 2,000 items (the suite's smoke run)

Each item has a true label (binary, shares 0.6 / 0.4). An item is easy or hard; an
annotator gives the true label with the accuracy of its difficulty, otherwise another
label at random. The scenarios set the share of hard items and the two accuracies, so
the rate at which two annotators disagree is known (printed as "P(2 disagree)").

- fixed m: every item gets m answers;
- adaptive k->m: every item starts with k answers; while they disagree, one more answer,
  up to m. "Disagree" is the majority rule (no label holds a strict majority of the
  answers so far) or the unanimity rule (the answers are not all the same).

With two labels the majority rule never goes past 3 answers (2 against 1 is a majority),
so "adaptive 2->5 majority" equals "adaptive 2->3 majority" here.

Gold is the majority of the answers (`stats.majority`; a tie is a wrong gold label).
Annotator-hours = answers x the active time per answer (--seconds, default 30).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.stats import TIE, majority  # noqa: E402

SCENARIOS = (  # name, share of hard items, accuracy on easy items, on hard items
    ("uniform, accuracy 0.9", 0.0, 0.9, 0.9),
    ("uniform, accuracy 0.75", 0.0, 0.75, 0.75),
    ("20 % hard (0.95 / 0.6)", 0.2, 0.95, 0.6),
    ("40 % hard (0.95 / 0.6)", 0.4, 0.95, 0.6),
)
POLICIES = (  # name, start k, up to m, rule
    ("fixed 3", 3, 3, None),
    ("fixed 5", 5, 5, None),
    ("adaptive 2->3 majority", 2, 3, "majority"),
    ("adaptive 2->5 majority", 2, 5, "majority"),
    ("adaptive 2->5 unanimity", 2, 5, "unanimity"),
    ("adaptive 3->5 unanimity", 3, 5, "unanimity"),
)


def disagree(answers: list[int], rule: str) -> bool:
    if rule == "unanimity":
        return len(set(answers)) > 1
    top = max(answers.count(v) for v in set(answers))
    return top * 2 <= len(answers)


def simulate(
    n_items: int, hard_share: float, easy: float, hard: float, rng: np.random.Generator
) -> list[tuple[str, int, float, float]]:
    truth = (rng.random(n_items) < 0.4).astype(int)
    accuracy = np.where(rng.random(n_items) < hard_share, hard, easy)
    # up to 5 answers per item, drawn once so every policy sees the same annotators
    correct = rng.random((n_items, 5)) < accuracy[:, None]
    answers = np.where(correct, truth[:, None], 1 - truth[:, None])
    rows = []
    for name, k, m, rule in POLICIES:
        used = 0
        right = 0
        for i in range(n_items):
            given = [int(a) for a in answers[i, :k]]
            while rule and len(given) < m and disagree(given, rule):
                given.append(int(answers[i, len(given)]))
            used += len(given)
            gold = majority(given).label
            right += gold != TIE and gold == truth[i]
        rows.append((name, used, used / n_items, right / n_items))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 items per scenario")
    parser.add_argument("--seconds", type=float, default=30.0, help="active seconds per answer")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n_items = 2_000 if args.quick else args.items
    rng = np.random.default_rng(args.seed)
    print(
        f"SYNTHETIC answers: {n_items} items per scenario, seed {args.seed}, "
        f"{args.seconds:g} s per answer"
    )
    print()
    header = (
        "scenario",
        "P(2 disagree)",
        "policy",
        "answers/item",
        "annotator-hours",
        "hours vs fixed m",
        "gold accuracy",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for scenario, hard_share, easy, hard in SCENARIOS:
        p_agree = (1 - hard_share) * (easy**2 + (1 - easy) ** 2) + hard_share * (
            hard**2 + (1 - hard) ** 2
        )
        rows = simulate(n_items, hard_share, easy, hard, rng)
        fixed = {m: used for name, used, _, _ in rows for m in (3, 5) if name == f"fixed {m}"}
        for name, used, per_item, accuracy in rows:
            m = int(name[-1]) if name.startswith("fixed") else int(name.split("->")[1][0])
            hours = used * args.seconds / 3600
            saved = f"{used / fixed[m] - 1:+.0%} vs fixed {m}"
            print(
                f"| {scenario} | {1 - p_agree:.3f} | {name} | {per_item:.2f} | "
                f"{hours:.1f} | {saved} | {accuracy:.3f} |"
            )


if __name__ == "__main__":
    main()
