"""An import enqueues the sentence counting after its commit (django.tasks): the worker
stores every new document's count under the report's splitter, so the first report
splits nothing; a failed import or one with no new document enqueues nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django_tasks_db.models import DBTaskResult

from annotation.ingest import ImportFailed, import_file
from annotation.models import Document, Project, SentenceCount
from annotation.reports import metrics
from pipeline.split import sentences_for
from tests.conftest import canonical_line, peer_file

from .test_import_scale import background, drain  # noqa: F401  (a fixture)


def counting_tasks() -> Any:
    return DBTaskResult.objects.filter(task_path="annotation.ingest.count_sentences")


@pytest.mark.django_db(transaction=True)
def test_a_real_import_is_counted_by_the_worker_and_the_report_splits_nothing(
    background: Any,  # noqa: F811
) -> None:
    path = peer_file("factscore_labeled/ChatGPT.jsonl")
    project = Project.objects.create(name="counted")
    summary = import_file(project=project, path=path, file=path.name)
    assert summary.documents_created == 183
    assert counting_tasks().count() == 1 and not SentenceCount.objects.exists()
    drain()
    [task] = counting_tasks()
    assert task.status == "SUCCESSFUL" and task.return_value == 183
    docs = {
        pk: (response, question)
        for pk, response, question in Document.objects.filter(project=project).values_list(
            "pk", "response", "question"
        )
    }
    stored = dict(
        SentenceCount.objects.filter(splitter=metrics.SPLITTER).values_list("document", "count")
    )
    assert stored == {pk: len(sentences_for(r, q)) for pk, (r, q) in docs.items()}
    with mock.patch.object(metrics, "sentences_for", side_effect=AssertionError("split")):
        assert metrics.sentence_counts(project, docs) == stored
    import_file(project=project, path=path, file=path.name)  # nothing new: nothing queued
    assert counting_tasks().count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_failed_import_enqueues_nothing(background: Any, tmp_path: Path) -> None:  # noqa: F811
    project = Project.objects.create(name="failed")
    path = tmp_path / "bad.jsonl"
    path.write_text(canonical_line(1) + "\n" + json.dumps({"id": "x"}) + "\n")
    with pytest.raises(ImportFailed):
        import_file(project=project, path=path, file=path.name)
    assert not counting_tasks().exists()


def test_counting_goes_in_chunks_and_skips_what_is_counted(db: None) -> None:
    project = Project.objects.create(name="chunks")
    other = Project.objects.create(name="other")
    import_file(
        project=project, text="\n".join(canonical_line(i) for i in range(5)), file="a.jsonl"
    )
    import_file(project=other, text=canonical_line(9), file="b.jsonl")
    first = Document.objects.filter(project=project).order_by("pk").first()
    assert first is not None
    metrics.sentence_counts(project, {first.pk: (first.response, first.question)})
    assert metrics.store_sentence_counts(project.pk, chunk=2) == 4
    assert SentenceCount.objects.filter(document__project=project).count() == 5
    assert not SentenceCount.objects.filter(document__project=other).exists()
    assert metrics.store_sentence_counts(project.pk, chunk=2) == 0
