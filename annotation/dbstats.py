"""PostgreSQL's planner statistics after a large write.

The planner sizes a table from the statistics of its last ANALYZE. After a large import
(a FActScore file: 5,000 facts) they still say "a few rows" until autovacuum analyzes
the tables, up to a minute later, and never for rows written inside a transaction that
is still open (an import job's, a test's). Meanwhile a report query can pick nested
loops over tens of thousands of rows: minutes instead of milliseconds. The same happens
to a new project's rows in tables analyzed before it existed: the statistics say "no row
of this project", and a report joining its 4,000 claim lists to its documents looped
over both (0.7 s per query at 10,000 items, quadratic in the size). So a large write
analyzes the tables it wrote (a fraction of a second; ANALYZE counts the open
transaction's own rows): an import, and making and assigning items."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import Model

from .models import Claim, ClaimList, Document, Evidence, Segment, System, Verdict

if TYPE_CHECKING:
    from .ingest import ImportSummary

ANALYZE_AFTER_ROWS = 1000
TABLES = [Document, System, ClaimList, Claim, Evidence, Segment, Verdict]


def analyze_after_write(summary: ImportSummary) -> bool:
    """ANALYZE the imported tables after a large import on PostgreSQL; True if it did."""
    rows = (
        summary.documents_created
        + summary.claims_created
        + summary.evidence_created
        + summary.segments_created
        + summary.verdicts_created
    )
    return analyze_after_rows(rows, TABLES)


def analyze_after_rows(rows: int, models: Iterable[type[Model]]) -> bool:
    """ANALYZE `models`' tables on PostgreSQL after a write of `rows` rows, if that is
    large (ANALYZE_AFTER_ROWS); True if it did."""
    if rows < ANALYZE_AFTER_ROWS or connection.vendor != "postgresql":
        return False
    names = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")
    return True
