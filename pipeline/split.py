"""Sentence splitting and VeriScore's sliding windows (paper §2.1.2, App. C)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pysbd

from pipeline.types import Window

PREVIOUS = 3  # context1: up to 3 sentences before
NEXT = 1  # context2: up to 1 sentence after
LONG_PARAGRAPH = 5  # paragraphs longer than this get their first sentence prepended

# The sentence splitter as a named component: "pysbd" (line by line, our default) or
# "spacy:<pipeline>" over the whole response, as the released VeriScore splits
# (spacy.load('en_core_web_sm')). "spacy:sentencizer" is spaCy's blank English pipeline
# with its rule-based sentencizer: no model weights, and the stand-in the parity harness
# registers as en_core_web_sm in the released code's environment (scripts/veriscore-venv).
PYSBD = "pysbd"
SPACY_STANDIN = "spacy:sentencizer"


@functools.cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


def split_paragraphs(
    text: str, split: Callable[[str], list[str]] = split_sentences
) -> list[list[str]]:
    """Lines are paragraphs; each is split into sentences (by `split`, pysbd by default).

    Splitting on lines first also keeps list items and headings out of each other's
    sentences, which pysbd alone would glue together across a newline.
    """
    paragraphs = [line.strip() for line in text.split("\n") if line.strip()]
    return [sents for sents in (split(p) for p in paragraphs) if sents]


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _window(sentences: list[str], i: int) -> tuple[str, str]:
    before = " ".join(sentences[max(0, i - PREVIOUS) : i])
    after = " ".join(sentences[i + 1 : i + 1 + NEXT])
    return before, after


def qa_windows(question: str, response: str, splitter: str = PYSBD) -> list[Window]:
    """QA input: the question is always prepended; context runs across paragraphs."""
    sentences = [s for para in split_paragraphs(response, line_splitter(splitter)) for s in para]
    windows = []
    for i, sentence in enumerate(sentences):
        before, after = _window(sentences, i)
        body = _join(before, f"<SOS>{sentence}<EOS>", after)
        windows.append(Window(i, sentence, f"Question: {question.strip()}\nResponse: {body}"))
    return windows


def non_qa_windows(response: str, splitter: str = PYSBD) -> list[Window]:
    """Non-QA input: windows stay inside a paragraph; long paragraphs lead with their first
    sentence. The lead is only added when it is not already inside context1 (the reference
    code repeats it for the first four sentences, which adds nothing for the model)."""
    windows = []
    index = 0
    for sentences in split_paragraphs(response, line_splitter(splitter)):
        for i, sentence in enumerate(sentences):
            before, after = _window(sentences, i)
            lead = sentences[0] if len(sentences) > LONG_PARAGRAPH and i > PREVIOUS else ""
            snippet = _join(lead, before, f"<SOS>{sentence}<EOS>", after)
            windows.append(Window(index, sentence, snippet))
            index += 1
    return windows


def windows_for(response: str, question: str | None, splitter: str = PYSBD) -> list[Window]:
    """Our windows; `splitter` names the sentence splitter used on each line."""
    if question and question.strip():
        return qa_windows(question, response, splitter)
    return non_qa_windows(response, splitter)


def sentences_for(response: str, question: str | None) -> list[str]:
    """The sentences the windows are built on, in index order."""
    return [w.sentence for w in windows_for(response, question)]


@functools.cache
def _spacy(pipeline: str) -> Callable[[str], list[str]]:
    try:
        import spacy
    except ImportError:
        raise ValueError(
            f"splitter spacy:{pipeline}: spaCy is not installed "
            "(pip install 'factuality-annotation[spacy]')"
        ) from None
    if pipeline == "sentencizer":
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
    else:
        try:
            nlp = spacy.load(pipeline)
        except OSError as e:
            raise ValueError(
                f"splitter spacy:{pipeline}: {e}; without that model, "
                f"--splitter {SPACY_STANDIN} splits by punctuation rules alone"
            ) from None

    def split(text: str) -> list[str]:
        return [s.text.strip() for s in nlp(text).sents]  # veriscore's get_sentence

    return split


def _spacy_pipeline(name: str) -> str:
    library, _, pipeline = name.partition(":")
    if library != "spacy" or not pipeline:
        raise ValueError(f"unknown splitter {name!r} (pysbd, or spacy:<pipeline>)")
    return pipeline


def splitter(name: str) -> Callable[[str], list[str]]:
    """The sentences of a whole response, by the named splitter (the reference mode's;
    spaCy's keep the released code's empty sentences); a bad name is an error."""
    if name == PYSBD:
        return lambda text: [s for para in split_paragraphs(text) for s in para]
    return _spacy(_spacy_pipeline(name))


def line_splitter(name: str) -> Callable[[str], list[str]]:
    """The sentences of one line (our default mode's windows), by the named splitter."""
    if name == PYSBD:
        return split_sentences
    split = _spacy(_spacy_pipeline(name))
    return lambda line: [s for s in split(line) if s]


def reference_windows(response: str, question: str | None, sentences: list[str]) -> list[Window]:
    """The windows exactly as the released VeriScore builds them (claim_extractor.py,
    qa_scanner_extractor / non_qa_scanner_extractor with an API model): over the whole
    response's sentences, "Response: " plus a space before an empty context1 (two spaces
    in front of the first sentence), and in a response of more than five sentences the
    first one in front of every window, repeated in sentences 0-3."""
    windows = []
    for i, text in enumerate(sentences):
        context1 = " ".join(sentences[max(0, i - PREVIOUS) : i]).strip()
        focus = f"<SOS>{text.strip()}<EOS>"
        context2 = " ".join(sentences[i + 1 : i + 1 + NEXT]).strip()
        if question:
            snippet = f"Question: {question.strip()}\nResponse: {context1} {focus} {context2}"
        elif len(sentences) <= LONG_PARAGRAPH:
            snippet = f"{context1} {focus} {context2}"
        else:
            snippet = f"{sentences[0].strip()} {context1} {focus} {context2}"
        windows.append(Window(i, text.strip(), snippet.strip()))
    return windows
