"""A FActScore/SAFE-style baseline: break one sentence into atomic facts, no context.

It extracts everything, verifiable or not, and does not resolve pronouns from the
surrounding text; that is the behaviour VeriScore is compared against (paper §2.1.1).
The demos are our own, in FActScore's "Please breakdown the following sentence into
independent facts" form.
"""

from __future__ import annotations

VERSION = "atomic-v1"

SYSTEM = "You are a helpful assistant who breaks sentences into independent atomic facts."

INSTRUCTIONS = (
    "Instructions:\n"
    "1. You are given a sentence. Your task is to break the sentence down into a list of "
    "atomic facts.\n"
    "2. An atomic fact is a sentence containing a singular piece of information.\n"
    "3. Each atomic fact in the outputted list should check a different piece of "
    "information.\n"
    "4. Use the previous examples to learn how to do this.\n"
    "5. You should only output the atomic facts as a list, with each item starting with "
    '"- ". Do not include other formatting.\n'
    "6. Your task is to do this for the last sentence that is given."
)

EXAMPLES: list[tuple[str, list[str]]] = [
    (
        "He was born in Leeds in 1954 and studied law at the University of Manchester.",
        [
            "He was born in Leeds.",
            "He was born in 1954.",
            "He studied law.",
            "He studied at the University of Manchester.",
        ],
    ),
    (
        "The bridge, which opened in 1932, is one of the most beautiful in the world.",
        [
            "The bridge opened in 1932.",
            "The bridge is one of the most beautiful in the world.",
        ],
    ),
    (
        "I think you will love this recipe.",
        ["I think you will love this recipe."],
    ),
]


def atomic_messages(sentence: str) -> list[dict[str, str]]:
    demos = "\n\n".join(
        "Please breakdown the following sentence into independent facts: "
        + s
        + "\n"
        + "\n".join(f"- {f}" for f in facts)
        for s, facts in EXAMPLES
    )
    user = (
        f"{INSTRUCTIONS}\n\n{demos}\n\n"
        f"Please breakdown the following sentence into independent facts: {sentence}\n"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
