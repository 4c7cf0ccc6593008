"""Claim -> claim list integrity on PostgreSQL without a database foreign key: migration
0023's triggers (annotation/claim_fk.py) refuse what the FK refused, as an IntegrityError.
SQLite keeps its FK. On both, Django's CASCADE still deletes claims with their lists."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor

from annotation import claim_fk, ingest
from annotation.models import Claim, ClaimList, Document, Project, System


def _list(name: str = "fk") -> ClaimList:
    project = Project.objects.create(name=name)
    doc = Document.objects.create(project=project, external_id="d", response="r")
    system = System.objects.create(project=project, name="s")
    cl = ClaimList.objects.create(document=doc, system=system)
    Claim.objects.bulk_create(Claim(claim_list=cl, position=i, text=f"c{i}") for i in range(3))
    return cl


def _missing_id() -> int:
    return (ClaimList.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000


TRIGGERS = {n for names in claim_fk.TRIGGERS.values() for n in names}


def test_the_claims_list_is_checked_after_migrating(db: None) -> None:
    # a later migration that rebuilds the claim table (SQLite's _remake_table) drops the FK
    expected = TRIGGERS if connection.vendor == "postgresql" else {"foreign key"}
    assert claim_fk.installed(connection) == expected


@pytest.mark.database("postgresql")  # SQLite: its FK, checked at COMMIT
def test_an_orphan_claim_is_refused_by_the_orm_and_by_raw_sql(db: None) -> None:
    _list()
    missing = _missing_id()
    with pytest.raises(IntegrityError, match="missing claim list"), transaction.atomic():
        Claim.objects.create(claim_list_id=missing, position=0, text="orphan")
    with pytest.raises(IntegrityError, match="missing claim list"), transaction.atomic():
        Claim.objects.bulk_create([Claim(claim_list_id=missing, position=0, text="orphan")])
    with (
        pytest.raises(IntegrityError, match="missing claim list"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO annotation_claim (claim_list_id, position, text, sentence) "
            "VALUES (%s, 0, 'orphan', '')",
            [missing],
        )
    assert not Claim.objects.filter(claim_list_id=missing).exists()


@pytest.mark.database("postgresql")  # SQLite: its FK, checked at COMMIT
def test_moving_a_claim_to_a_missing_list_is_refused(db: None) -> None:
    cl = _list()
    with pytest.raises(IntegrityError, match="missing claim list"), transaction.atomic():
        Claim.objects.filter(claim_list=cl).update(claim_list_id=_missing_id())
    assert Claim.objects.filter(claim_list=cl).count() == 3


@pytest.mark.database("postgresql")
def test_an_orphan_in_a_copy_is_refused_and_one_statement_checks_many_lists(db: None) -> None:
    cl = _list()
    good = [(cl.pk, 10 + i, "t", None, "") for i in range(5)]
    with pytest.raises(IntegrityError, match=r"claim_list_id=\d+"), transaction.atomic():
        ingest._copy_rows(
            Claim, ingest.CLAIM_COLUMNS, [*good, (_missing_id(), 0, "t", None, "")], None
        )
    ingest._copy_rows(Claim, ingest.CLAIM_COLUMNS, good, None)
    assert cl.claims.count() == 8


@pytest.mark.database("postgresql")  # SQLite: its FK, checked at COMMIT
def test_a_raw_delete_or_key_change_of_a_referenced_list_is_refused(db: None) -> None:
    cl = _list()
    for sql in (
        "DELETE FROM annotation_claimlist WHERE id = %s",
        "UPDATE annotation_claimlist SET id = id + 100000 WHERE id = %s",
    ):
        with (
            pytest.raises(IntegrityError, match="still referenced"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [cl.pk])
    assert ClaimList.objects.filter(pk=cl.pk).exists()
    # an unreferenced list goes
    Claim.objects.filter(claim_list=cl).delete()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM annotation_claimlist WHERE id = %s", [cl.pk])
    assert not ClaimList.objects.filter(pk=cl.pk).exists()


@pytest.mark.parametrize("what", ["project", "document", "system", "claim list"])
def test_orm_deletes_still_cascade_to_the_claims(db: None, what: str) -> None:
    cl = _list()
    other = _list("other")  # untouched
    target: Any = {
        "project": cl.document.project,
        "document": cl.document,
        "system": cl.system,
        "claim list": cl,
    }[what]
    target.delete()
    assert not Claim.objects.filter(claim_list_id=cl.pk).exists()
    assert not ClaimList.objects.filter(pk=cl.pk).exists()
    assert other.claims.count() == 3
    orphans = Claim.objects.exclude(claim_list_id__in=ClaimList.objects.values("pk"))
    assert not orphans.exists()


@pytest.mark.database("postgresql")
@pytest.mark.django_db(transaction=True)
def test_an_insert_against_a_concurrent_delete_fails_after_the_delete_commits() -> None:
    import psycopg

    cl = _list()
    Claim.objects.filter(claim_list=cl).delete()
    s = connection.settings_dict
    params = {"dbname": s["NAME"], "user": s["USER"], "password": s["PASSWORD"]}
    params |= {"host": s["HOST"], "port": s["PORT"]}
    deleter = psycopg.connect(**{k: v for k, v in params.items() if v})
    failure: list[BaseException] = []

    def insert() -> None:  # transaction B, through Django in its own connection
        try:
            with transaction.atomic():
                Claim.objects.create(claim_list_id=cl.pk, position=0, text="late")
        except BaseException as e:
            failure.append(e)
        finally:
            connections.close_all()

    try:
        with deleter.cursor() as cur:
            cur.execute("DELETE FROM annotation_claimlist WHERE id = %s", [cl.pk])  # A: open
            thread = threading.Thread(target=insert)
            thread.start()
            # wait for the state: B waits on A's row lock (a guard, not a timing: 120 s)
            give_up = time.monotonic() + 120
            while True:
                cur.execute(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()"
                )
                row = cur.fetchone()
                if row and row[0] or not thread.is_alive():
                    break
                assert time.monotonic() < give_up, "transaction B never waited for A's lock"
                thread.join(0.02)  # between polls
        deleter.commit()
        thread.join()
    finally:
        deleter.close()
    assert len(failure) == 1 and isinstance(failure[0], IntegrityError), failure
    assert "missing claim list" in str(failure[0])
    assert not Claim.objects.filter(claim_list_id=cl.pk).exists()


@pytest.mark.database("postgresql")
@pytest.mark.django_db(transaction=True)
def test_the_reverse_migration_restores_the_foreign_key() -> None:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("annotation")
    executor.migrate([("annotation", "0022_import_indexes")])
    try:
        assert claim_fk.installed(connection) == {"foreign key"}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
    assert claim_fk.installed(connection) == TRIGGERS


@pytest.mark.database("postgresql")
@pytest.mark.parametrize("check", ["insert", "delete"])
def test_the_checks_probe_the_index_whatever_the_statistics_say(db: None, check: str) -> None:
    """Each id one index probe: not the whole table read for each statement, which the
    planner chose without statistics (a large import's own rows) for a plain IN/EXISTS,
    making every COPY of an import slower than the one before. The trigger's query is
    explained over a table standing in for its transition table."""
    cl = _list()
    table, sql = {
        "insert": ("new_rows", claim_fk.INSERT_CHECK),
        "delete": ("old_rows", claim_fk.DELETE_CHECK),
    }[check]
    with transaction.atomic(), connection.cursor() as cursor:
        column = "claim_list_id" if check == "insert" else "id"
        cursor.execute(
            f"CREATE TEMP TABLE {table} AS SELECT %s::bigint + g %% 2000 AS {column} "
            "FROM generate_series(1, 30000) g",
            [cl.pk],
        )
        cursor.execute(f"ANALYZE {table}")
        for name in ("annotation_claimlist", "annotation_claim"):
            cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [name])
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    # (the test's tables are a page each: scanning one per id is what the planner takes)
    assert "Nested Loop" in plan and "Hash" not in plan.replace("HashAggregate", ""), plan
    assert "Merge" not in plan, plan
    assert ("= new_rows.claim_list_id" if check == "insert" else "= o.id") in plan, plan
