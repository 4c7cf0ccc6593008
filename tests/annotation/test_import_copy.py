"""PostgreSQL imports write with COPY: documents, claim lists and plain claims go in as
COPY rows with ids taken from the tables' sequences, in the import's one transaction and
under the same constraints (the all-or-nothing tests of test_import_scale.py run on
PostgreSQL in CI's PostgreSQL pass)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation import ingest
from annotation.ingest import ImportFailed, import_file
from annotation.models import Claim, ClaimList, Document, Evidence, Project
from tests.conftest import canonical_line

pytestmark = pytest.mark.database("postgresql")  # COPY is PostgreSQL's


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="copy")


def test_an_import_writes_with_copy_and_every_row_lands_in_its_document(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "BATCH", 4)
    path = tmp_path / "copy.jsonl"
    path.write_text("".join(canonical_line(i) + "\n" for i in range(10)))
    inserts: list[str] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith("INSERT"):
            inserts.append(sql)
        return execute(sql, params, many, context)

    with (
        mock.patch.object(ingest, "_copy_rows", wraps=ingest._copy_rows) as copied,
        mock.patch.object(ingest, "_copy_claims", wraps=ingest._copy_claims) as claims,
        connection.execute_wrapper(keep),
    ):
        summary = import_file(project=project, path=path, file=path.name)
    tables = {call.args[0] for call in copied.call_args_list}
    assert tables == {Document, ClaimList}
    assert claims.call_count == 3  # a batch each
    assert not [sql for sql in inserts if "annotation_claim" in sql or "document" in sql]
    assert summary.documents_created == Document.objects.filter(project=project).count() == 10
    for doc in Document.objects.filter(project=project):
        record = json.loads(canonical_line(int(doc.external_id.removeprefix("doc-"))))
        assert doc.response == record["response"]
        lists = doc.claim_lists.select_related("system")
        assert len(lists) == 2
        for cl in lists:
            texts = [c.text for c in cl.claims.order_by("position")]
            assert texts == record["claim_lists"][cl.system.name]
    # the sequences moved past the copied ids: an ordinary insert gets a new one
    later = Document.objects.create(project=project, external_id="later", response="r")
    assert later.pk > max(Document.objects.exclude(pk=later.pk).values_list("pk", flat=True))


def test_copy_is_checked_by_the_same_constraints(project: Project) -> None:
    columns = ("project", "external_id", "response", "question", "domain", "source_model")
    columns += ("metadata", "created_at")
    row = (project.pk, "same", "a", "", "", "", "{}", timezone.now())
    with pytest.raises(IntegrityError, match="unique_external_id"), transaction.atomic():
        ingest._copy_rows(Document, columns, [row, row], 2)
    assert not Document.objects.filter(project=project).exists()


def test_a_later_error_undoes_the_copied_batches(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "BATCH", 3)
    path = tmp_path / "late.jsonl"
    path.write_text("".join(canonical_line(i) + "\n" for i in range(9)) + '{"id": 1}\n')
    with pytest.raises(ImportFailed, match="late.jsonl, line 10"):
        import_file(project=project, path=path, file=path.name)
    assert not Document.objects.filter(project=project).exists()
    assert not Claim.objects.filter(claim_list__document__project=project).exists()


def test_claims_copied_without_ids_take_them_from_the_identity_and_are_checked_at_once(
    project: Project,
) -> None:
    """Plain claims go in without ids (the table's identity gives them); a claim of a
    list that does not exist fails at its COPY during an import, not at COMMIT."""
    doc = Document.objects.create(project=project, external_id="d", response="r")
    cl = ClaimList.objects.create(document=doc, system=project.systems.create(name="s"))
    before = Claim.objects.create(claim_list=cl, position=0, text="first")
    rows = [(cl.pk, 1, "second", None, ""), (cl.pk, 2, "third", None, "")]
    assert ingest._copy_rows(Claim, ingest.CLAIM_COLUMNS, iter(rows), None) == []
    after = Claim.objects.create(claim_list=cl, position=3, text="fourth")
    ids = list(cl.claims.order_by("position").values_list("pk", flat=True))
    assert ids == sorted(ids) and ids[0] == before.pk and ids[-1] == after.pk
    orphan = [(cl.pk + 1000, 0, "orphan", None, "")]
    with transaction.atomic():
        ingest._check_constraints_per_statement(True)
        with pytest.raises(IntegrityError, match="claim_list_id"), transaction.atomic():
            ingest._copy_rows(Claim, ingest.CLAIM_COLUMNS, orphan, None)
        ingest._check_constraints_per_statement(False)


@pytest.mark.parametrize("fails", [False, True])
def test_the_callers_transaction_has_its_constraints_deferred_again_after_an_import(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    monkeypatch.setattr(ingest, "BATCH", 3)
    path = tmp_path / "in-a-transaction.jsonl"
    lines = [canonical_line(i) for i in range(7)] + (['{"id": 1}'] if fails else [])
    path.write_text("".join(line + "\n" for line in lines))
    with transaction.atomic():
        try:
            import_file(project=project, path=path, file=path.name)
        except ImportFailed:
            assert fails
        # (a claim's list is checked by a trigger, at once: evidence keeps Django's FK)
        table = connection.ops.quote_name(Evidence._meta.db_table)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (claim_id, rank, title, snippet, link) "
                "VALUES (-1, 1, '', '', '')"
            )  # deferred: accepted until the check
            with pytest.raises(IntegrityError, match="claim_id"):
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            transaction.set_rollback(True)
    assert Document.objects.filter(project=project).count() == (0 if fails else 7)


def test_each_batch_looks_its_ids_up_by_the_unique_index(project: Project, tmp_path: Path) -> None:
    """One probe of unique_external_id per id, whatever the statistics say. Not every
    document of the project read and filtered by the batch's 1,000 ids: what PostgreSQL
    chose for `external_id IN (...)` without statistics, making each batch of a large
    import slower than the one before."""
    path = tmp_path / "ids.jsonl"
    path.write_text("".join(canonical_line(i) + "\n" for i in range(3)))
    lookups: list[tuple[str, Any]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if "annotation_document" in sql and "external_id" in sql and sql.startswith("SELECT"):
            lookups.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        import_file(project=project, path=path, file=path.name)
    [(sql, params)] = lookups
    assert params[0] == [f"doc-{i}" for i in range(3)]
    many = [f"synthetic-{i}" for i in range(1000)]  # a whole batch's ids
    with transaction.atomic(), connection.cursor() as cursor:
        # A project of 20,000 documents (rolled back): on a table of a few pages a scan
        # per id is the planner's right choice, and how few pages it has depends on the
        # tests run before (an ANALYZE of a small table); the planner scales the last
        # ANALYZE's density to the table's current size, so this one is large whatever ran
        cursor.execute(
            "INSERT INTO annotation_document (project_id, external_id, domain, question, "
            "response, source_model, metadata, created_at) SELECT %s, 'filler-' || g, '', '', "
            "repeat('x', 200), '', '{}', now() FROM generate_series(1, 20000) g",
            [project.pk],
        )
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'annotation_document'::regclass")
        cursor.execute("EXPLAIN " + sql, [many, *params[1:]])
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    assert "Nested Loop" in plan and "unique_external_id" in plan, plan
    assert "ANY" not in plan, plan  # no filter by the list


def test_claims_copied_as_text_keep_every_character(project: Project, tmp_path: Path) -> None:
    """Plain claims go in as COPY text written by hand: its escapes (backslash, tab,
    newline, carriage return; \\N is NULL) must not change a claim or its sentence."""
    odd = ["tab\there", "new\nline", "cr\rlf\r\n", "back\\slash", "\\N", "\\t literal", "ü ✓ 𝄞"]
    sentences = [{"text": t, "sentence_index": i, "sentence": f"s {t}"} for i, t in enumerate(odd)]
    sentences[0]["sentence_index"] = None
    lines = [
        canonical_line(0, claim_lists={"plain": odd}),
        canonical_line(1, claim_lists={"rich": sentences}),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    import_file(project=project, path=path, file=path.name)
    plain = Claim.objects.filter(claim_list__system__name="plain").order_by("position")
    assert [(c.text, c.sentence_index, c.sentence) for c in plain] == [(t, None, "") for t in odd]
    rich = Claim.objects.filter(claim_list__system__name="rich").order_by("position")
    assert [(c.text, c.sentence_index, c.sentence) for c in rich] == [
        (s["text"], s["sentence_index"], s["sentence"]) for s in sentences
    ]
