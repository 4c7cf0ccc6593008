"""After a large import PostgreSQL's planner knows the tables' new sizes (annotation.dbstats):
without it, a database analyzed while empty (a fresh one, or the test database) planned a
report query over 5,000 facts as nested loops over "empty" tables and ran for minutes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Q

from annotation import hiring
from annotation.dbstats import TABLES
from annotation.hiring import TRAINING, QualityItem
from annotation.ingest import import_file
from annotation.models import Assignment, Claim, ClaimList, Item, Project
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line, peer_file

pytestmark = pytest.mark.database("postgresql")  # PostgreSQL's planner statistics only


def estimated_rows(model: type) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return float(cursor.fetchone()[0])


@pytest.fixture
def sized_empty(db: None) -> Project:
    names = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in TABLES)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")  # as a fresh database: every table sized empty
    assert estimated_rows(Claim) <= 0
    return Project.objects.create(name="stats")


def test_a_large_import_tells_the_planner_the_new_table_sizes(sized_empty: Project) -> None:
    path = peer_file("factscore_labeled/ChatGPT.jsonl")
    import_file(project=sized_empty, text=path.read_bytes(), file=path.name)
    assert Claim.objects.count() > 10_000
    for model in (Claim, ClaimList):
        actual = model.objects.count()
        assert 0.5 * actual <= estimated_rows(model) <= 2 * actual, model


def test_a_small_import_leaves_the_statistics_to_autovacuum(sized_empty: Project) -> None:
    import_file(project=sized_empty, text=canonical_line(0), file="one.jsonl")
    assert estimated_rows(Claim) <= 0


def test_making_many_items_tells_the_planner_their_sizes(alpha: Project) -> None:
    # a project made after the tables were analyzed: the statistics say it has no rows
    names = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in (Item, Assignment))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")
    assert estimated_rows(Assignment) <= 0
    lines = "\n".join(canonical_line(i) for i in range(4, 404))
    import_file(project=alpha, text=lines, file="more.jsonl")
    call_command(
        "create_items", "alpha", "comparison", SYSTEM_A, SYSTEM_B, "--k", "all", "--fraction", "1"
    )
    for model in (Item, Assignment):
        actual = model.objects.count()
        assert actual >= 404 and 0.5 * actual <= estimated_rows(model) <= 2 * actual, model


def plan_rows(queryset: Any) -> float:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return float(plan[0]["Plan"]["Plan Rows"])


def test_the_planner_counts_the_regular_assignments(alpha: Project) -> None:
    """`hiring.regular()` as NOT EXISTS: PostgreSQL estimated the LEFT JOIN ... IS NULL of
    `item__quality__isnull=True` as 0.5 % of the rows whatever the data (here 1 row of
    806), and planned the report's answers (10,000 items) as nested loops with a sort
    spilled to disk."""
    lines = "\n".join(canonical_line(i) for i in range(4, 404))
    import_file(project=alpha, text=lines, file="more.jsonl")
    call_command(
        "create_items", "alpha", "comparison", SYSTEM_A, SYSTEM_B, "--k", "all", "--fraction", "1"
    )  # ANALYZEs Item and Assignment (a test above)
    QualityItem.objects.create(item=Item.objects.filter(project=alpha).first(), role=TRAINING)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + connection.ops.quote_name(QualityItem._meta.db_table))
    regular = Assignment.objects.filter(Q(item__project=alpha) & hiring.regular())
    actual = regular.count()
    assert actual >= 800
    assert 0.5 * actual <= plan_rows(regular) <= 2 * actual
