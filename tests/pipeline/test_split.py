from __future__ import annotations

from pipeline.split import non_qa_windows, qa_windows, split_sentences, windows_for


def test_it_splits_sentences_with_pysbd() -> None:
    assert split_sentences("Dr. Smith went to Washington. He arrived at 5 p.m. on Monday.") == [
        "Dr. Smith went to Washington.",
        "He arrived at 5 p.m. on Monday.",
    ]


def test_qa_window_prepends_the_question_and_marks_the_sentence() -> None:
    windows = qa_windows("Who was Ada?", "S1. S2. S3. S4. S5. S6.")
    assert [w.sentence for w in windows] == ["S1.", "S2.", "S3.", "S4.", "S5.", "S6."]
    # first sentence: nothing before, one after
    assert windows[0].snippet == "Question: Who was Ada?\nResponse: <SOS>S1.<EOS> S2."
    # up to three before, one after
    assert windows[4].snippet == "Question: Who was Ada?\nResponse: S2. S3. S4. <SOS>S5.<EOS> S6."
    # last sentence: nothing after
    assert windows[5].snippet == "Question: Who was Ada?\nResponse: S3. S4. S5. <SOS>S6.<EOS>"


def test_qa_context_runs_across_paragraphs() -> None:
    windows = qa_windows("Q?", "Intro here.\n\n1. First item.\n2. Second item.")
    assert [w.sentence for w in windows] == ["Intro here.", "1. First item.", "2. Second item."]
    assert (
        windows[2].snippet
        == "Question: Q?\nResponse: Intro here. 1. First item. <SOS>2. Second item.<EOS>"
    )


def test_non_qa_window_stays_inside_its_paragraph() -> None:
    windows = non_qa_windows("A one. A two.\nB one. B two.")
    assert [w.index for w in windows] == [0, 1, 2, 3]
    assert windows[1].snippet == "A one. <SOS>A two.<EOS>"
    assert windows[2].snippet == "<SOS>B one.<EOS> B two."


def test_short_paragraph_gets_no_lead_sentence() -> None:
    windows = non_qa_windows("S1. S2. S3. S4. S5.")
    assert windows[4].snippet == "S2. S3. S4. <SOS>S5.<EOS>"


def test_long_paragraph_prepends_its_first_sentence() -> None:
    windows = non_qa_windows("S1. S2. S3. S4. S5. S6. S7.")
    # the lead is already in context1 for the first four sentences
    assert windows[3].snippet == "S1. S2. S3. <SOS>S4.<EOS> S5."
    assert windows[4].snippet == "S1. S2. S3. S4. <SOS>S5.<EOS> S6."
    assert windows[6].snippet == "S1. S4. S5. S6. <SOS>S7.<EOS>"


def test_a_blank_question_means_non_qa() -> None:
    assert windows_for("S1. S2.", "  ")[0].snippet == "<SOS>S1.<EOS> S2."
    assert windows_for("S1. S2.", "Why?")[0].snippet.startswith("Question: Why?")


def test_empty_response_has_no_windows() -> None:
    assert windows_for("", "Q?") == []
    assert windows_for("\n\n", None) == []
