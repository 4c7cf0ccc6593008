"""VeriScore claim-extraction prompts (paper App. C, Tables 6 and 7).

The instructions follow the paper's text; the few-shot examples are our own, written in
the same form (a window with <SOS>...<EOS>, the focused sentence, the facts or
"No verifiable claim.").
"""

from __future__ import annotations

from pipeline.types import Window

VERSION = "veriscore-extract-v1"

SYSTEM = (
    "You are a helpful assistant who can extract verifiable atomic claims from a piece of "
    "text. Each atomic fact should be verifiable against reliable external world knowledge "
    "(e.g., via Wikipedia)"
)

_RULES = """Any story, personal experiences, hypotheticals (e.g., "would be" or subjunctive), \
subjective statements (e.g., opinions), suggestions, advice, instructions, and other such content \
should not be included in the list. Biographical, historical, scientific, and other such texts are \
not personal experiences or stories. You should extract verifiable facts from them. Each fact \
should also be describing either one single event (e.g., "Nvidia is founded in 1993 in Sunnyvale, \
California, U.S.") or single state (e.g., "UMass Amherst has existed for 161 years.") with \
necessary time and location information. Quotations should be extracted verbatim with the source \
when available. Listed references should be ignored."""

_FOCUS = """Each fact should be understandable on its own and require no additional context. \
{relate}This means that all entities must be referred to by name but not pronoun. Use the name of \
entities rather than definite noun phrases (e.g., 'the teacher') whenever possible. If a definite \
noun phrase is used, be sure to add modifiers (e.g., a embedded clause, a prepositional phrase, \
etc.). Each fact must be situated within relevant temporal and location whenever needed. Keep \
each fact to one sentence with zero or at most one embedded clause. You do not need to justify \
what you extract.

If there is no verifiable fact in the sentence, please write "No verifiable claim."
"""

NON_QA_INSTRUCTIONS = (
    "You are trying to verify how factual a piece of text is. To do so, you need to break down "
    "a sentence and extract as many fine-grained facts mentioned in the sentence as possible. "
    "Each of these fine-grained facts should be verifiable against reliable external world "
    "knowledge (e.g., via Wikipedia). "
    + _RULES
    + "\n\nExtract fine-grained facts from the sentence marked between <SOS> and <EOS>. You "
    "should focus on the named entities and numbers in the sentence and extract relevant "
    "information from the sentence. Other sentences are only context for you to recover "
    'pronouns, definite phrases (e.g., "the victims" or "the pope"), and so on. '
    + _FOCUS.format(relate="")
)

QA_INSTRUCTIONS = (
    "You are trying to verify how factual a response to a question or request is. To do so, "
    "you need to break down a sentence and extract as many fine-grained facts mentioned in the "
    "response. Each of these fine-grained facts should be verifiable against reliable external "
    "world knowledge (e.g., via Wikipedia). "
    + _RULES
    + " Extract fine-grained facts from the sentence between <SOS> and <EOS>. You should focus "
    "on the named entities and numbers in the sentence and extract relevant information from "
    "the sentence. Do not extract claims from the question. The question and other sentences "
    'are only context for you to recover pronouns, definite phrases (e.g., "the victims" or '
    '"the pope"), and so on. '
    + _FOCUS.format(
        relate="This means that you need to always related the extracted claims to the question. "
    )
)

# (window, sentence, facts); an empty facts list renders as "No verifiable claim."
NON_QA_EXAMPLES: list[tuple[str, str, list[str]]] = [
    (
        "The Danube is the second-longest river in Europe. <SOS>It rises in the Black Forest "
        "in Germany and flows for about 2,850 kilometres before reaching the Black Sea.<EOS> "
        "Ten countries lie in its drainage basin.",
        "It rises in the Black Forest in Germany and flows for about 2,850 kilometres before "
        "reaching the Black Sea.",
        [
            "The Danube rises in the Black Forest in Germany.",
            "The Danube flows for about 2,850 kilometres.",
            "The Danube flows into the Black Sea.",
        ],
    ),
    (
        "Marie Curie was a Polish-born physicist and chemist. <SOS>In 1903 she shared the "
        "Nobel Prize in Physics with her husband Pierre and with Henri Becquerel.<EOS>",
        "In 1903 she shared the Nobel Prize in Physics with her husband Pierre and with Henri "
        "Becquerel.",
        [
            "Marie Curie shared the Nobel Prize in Physics in 1903.",
            "Marie Curie shared the 1903 Nobel Prize in Physics with Pierre Curie.",
            "Marie Curie shared the 1903 Nobel Prize in Physics with Henri Becquerel.",
            "Pierre Curie was the husband of Marie Curie.",
        ],
    ),
    (
        "Last summer my brother and I drove along the coast for a week. <SOS>Honestly, it was "
        "the best holiday we ever had, and I would do it again tomorrow.<EOS> We stopped in "
        "every small town we passed.",
        "Honestly, it was the best holiday we ever had, and I would do it again tomorrow.",
        [],
    ),
    (
        "The Rosetta Stone was found in 1799 near the town of Rashid in Egypt. It carries the "
        "same decree in three scripts. <SOS>Because of this, Jean-François Champollion was "
        "able to announce the decipherment of Egyptian hieroglyphs in 1822.<EOS> You should "
        "visit it if you are ever in London.",
        "Because of this, Jean-François Champollion was able to announce the decipherment of "
        "Egyptian hieroglyphs in 1822.",
        [
            "Jean-François Champollion announced the decipherment of Egyptian hieroglyphs in 1822.",
            "Jean-François Champollion used the Rosetta Stone to decipher Egyptian hieroglyphs.",
        ],
    ),
]

QA_EXAMPLES: list[tuple[str, str, list[str]]] = [
    (
        "Question: Why do cats purr?\nResponse: Cats purr for several reasons. <SOS>Purring "
        "is produced by the rapid twitching of the muscles of the larynx, about 25 to 150 "
        "times per second.<EOS> Mother cats also purr to guide their kittens.",
        "Purring is produced by the rapid twitching of the muscles of the larynx, about 25 to "
        "150 times per second.",
        [
            "Cats' purring is produced by the rapid twitching of the muscles of the larynx.",
            "The laryngeal muscles of a purring cat twitch about 25 to 150 times per second.",
        ],
    ),
    (
        "Question: Can you suggest a name for my bakery?\nResponse: <SOS>Sure, how about "
        '"The Rolling Pin"?<EOS> It sounds friendly and easy to remember.',
        'Sure, how about "The Rolling Pin"?',
        [],
    ),
    (
        "Question: Which programming language should I learn first for data analysis?\n"
        "Response: Python is a good first choice. <SOS>It was created by Guido van Rossum "
        "and first released in 1991, and libraries such as pandas make tabular data easy to "
        "handle.<EOS> I would start with a short online course.",
        "It was created by Guido van Rossum and first released in 1991, and libraries such as "
        "pandas make tabular data easy to handle.",
        [
            "Python was created by Guido van Rossum.",
            "Python was first released in 1991.",
            "pandas is a Python library for handling tabular data.",
        ],
    ),
    (
        "Question: How do I keep basil alive indoors?\nResponse: Basil likes warmth and "
        "light. <SOS>Place it near a south-facing window and water it whenever the top of the "
        "soil feels dry.<EOS> Basil is native to tropical regions from central Africa to "
        "Southeast Asia.",
        "Place it near a south-facing window and water it whenever the top of the soil feels dry.",
        [],
    ),
]


def _facts(facts: list[str]) -> str:
    return "\n".join(f"- {f}" for f in facts) if facts else "No verifiable claim."


def _render(examples: list[tuple[str, str, list[str]]], qa: bool) -> str:
    blocks = []
    for window, sentence, facts in examples:
        text = window if qa else f"Text: {window}"
        blocks.append(f"{text}\n\nSentence to be focused on: {sentence}\n\nFacts:\n{_facts(facts)}")
    return "\n\n".join(blocks)


def extraction_messages(window: Window, *, qa: bool) -> list[dict[str, str]]:
    instructions = QA_INSTRUCTIONS if qa else NON_QA_INSTRUCTIONS
    examples = _render(QA_EXAMPLES if qa else NON_QA_EXAMPLES, qa)
    text = window.snippet if qa else f"Text: {window.snippet}"
    user = (
        f"{instructions}\nHere are some examples:\n\n{examples}\n\n"
        f"Extract *verifiable atomic* facts.\n\n{text}\n\n"
        f"Sentence to be focused on: {window.sentence}\n\nFacts:"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
