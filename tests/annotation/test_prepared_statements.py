"""On PostgreSQL the queries an annotator's requests repeat are prepared and planned once
(settings: server-side binding, prepare_threshold). The assignment lookup joins 8 tables:
planning it took longer than running it, and the load benchmark's throughput on
PostgreSQL was half of SQLite's until the plan was reused."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from annotation.models import Item

from ..conftest import login

pytestmark = pytest.mark.database("postgresql")  # prepared statements are PostgreSQL's


def prepared_assignment_lookups() -> list[tuple[str, int]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans FROM pg_prepared_statements")
        return [
            (sql, plans)
            for sql, plans in cursor.fetchall()
            if 'FROM "annotation_assignment"' in sql and '"annotation_membership"' in sql
        ]


def test_the_item_page_reuses_the_plan_of_its_assignment_lookup(
    client: Client, users: dict[str, Any], alpha_items: list[Item]
) -> None:
    login(client, users["bob"])
    url = client.get(f"/p/{alpha_items[0].project_id}/next/")["Location"]
    for _ in range(15):  # prepared at the 5th, planned generically after 5 more
        assert client.get(url).status_code == 200
    lookups = prepared_assignment_lookups()
    assert lookups, "the assignment lookup is not a prepared statement"
    assert max(plans for _, plans in lookups) > 0, "the prepared lookup is planned every time"
