"""The claim -> claim list foreign key, checked by triggers instead of a database FK.

PostgreSQL checks a foreign key with one `SELECT ... FOR KEY SHARE` per inserted row: a
100,000-line import COPYs 3,000,000 claims, and those lookups were as much server time
as the rows themselves. Here an insert into annotation_claim is checked once per
statement, set-based (a transition table): every claim list the new rows name must exist,
and each is locked FOR KEY SHARE as the FK's check locks it, so a concurrent delete of it
either waits for the inserting transaction or makes the check fail. Deleting a claim list
that claims still reference fails (statement-level too: Django's CASCADE deletes the
claims first); changing the key of either side is checked per row (rare).

Each id is looked up by its own index probe (a LATERAL subquery, which the planner keeps
as a nested loop): without statistics (a large import's own rows) the planner read the
whole claim list table for each COPY instead, a cost growing with the table (measured:
server CPU per 30,000 lines 2.8 s at the start of a 300,000-line import, 3.8 s at its
end; 2.4 s flat without the check).

The triggers raise what a foreign key raises (django.db.IntegrityError, SQLSTATE 23503).
Where they do less than PostgreSQL's FK: the delete check reads with its statement's
snapshot, which under READ COMMITTED (Django's default, the only level this project
uses) sees claims committed by a transaction it waited for; a deleting transaction at
REPEATABLE READ or SERIALIZABLE would not (the FK uses a crosscheck snapshot). A TRUNCATE
of annotation_claimlist alone is not refused (triggers do not see it; Django's flush
truncates both tables in one statement).
SQLite keeps the database FK, which it checks at COMMIT (Django's are deferred there):
`flush` deletes the tables in any order, which immediate checks (SQLite triggers have no
other kind) would refuse; SQLite's import speed was met with the FK (6,900 documents/s).

Installed by migration 0023 (the model says db_constraint=False: on SQLite the migration
leaves the table as it is). A migration that rebuilds annotation_claim (Django's SQLite
`_remake_table`) or drops the triggers removes the check: tests/annotation/
test_claim_fk.py fails then (call `create`/restore the FK after such a migration).
"""

from __future__ import annotations

from typing import Any

CLAIM = "annotation_claim"
CLAIMLIST = "annotation_claimlist"
MISSING = "claim references a missing claim list"
REFERENCED = "claim list is still referenced by claims"

# the first claim list id of the inserted claims (new_rows) that does not exist, locking
# those that do; the first deleted claim list id (old_rows) that claims still reference
INSERT_CHECK = f"""SELECT min(n.id) FROM (SELECT DISTINCT claim_list_id AS id FROM new_rows) n
    LEFT JOIN LATERAL (SELECT l.id FROM {CLAIMLIST} l WHERE l.id = n.id FOR KEY SHARE OF l) x
    ON true WHERE x.id IS NULL"""
DELETE_CHECK = f"""SELECT o.id FROM old_rows o,
    LATERAL (SELECT 1 FROM {CLAIM} c WHERE c.claim_list_id = o.id LIMIT 1) c LIMIT 1"""

POSTGRESQL = f"""
CREATE FUNCTION {CLAIM}_fk_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE missing bigint;
BEGIN
  {INSERT_CHECK.replace("SELECT min(n.id)", "SELECT min(n.id) INTO missing")};
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION '{CLAIM}: {MISSING} (claim_list_id=%)', missing
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER {CLAIM}_fk_insert AFTER INSERT ON {CLAIM}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {CLAIM}_fk_insert();

CREATE FUNCTION {CLAIM}_fk_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM {CLAIMLIST} WHERE id = NEW.claim_list_id FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION '{CLAIM}: {MISSING} (claim_list_id=%)', NEW.claim_list_id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER {CLAIM}_fk_update AFTER UPDATE OF claim_list_id ON {CLAIM} FOR EACH ROW
  WHEN (OLD.claim_list_id IS DISTINCT FROM NEW.claim_list_id)
  EXECUTE FUNCTION {CLAIM}_fk_update();

CREATE FUNCTION {CLAIMLIST}_fk_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE referenced bigint;
BEGIN
  {DELETE_CHECK.replace("SELECT o.id", "SELECT o.id INTO referenced")};
  IF referenced IS NOT NULL THEN
    RAISE EXCEPTION '{CLAIMLIST}: {REFERENCED} (id=%)', referenced
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER {CLAIMLIST}_fk_delete AFTER DELETE ON {CLAIMLIST}
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {CLAIMLIST}_fk_delete();

CREATE FUNCTION {CLAIMLIST}_fk_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM {CLAIM} WHERE claim_list_id = OLD.id) THEN
    RAISE EXCEPTION '{CLAIMLIST}: {REFERENCED} (id=%)', OLD.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER {CLAIMLIST}_fk_update AFTER UPDATE OF id ON {CLAIMLIST} FOR EACH ROW
  WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION {CLAIMLIST}_fk_update();
"""

TRIGGERS = {
    CLAIM: [f"{CLAIM}_fk_insert", f"{CLAIM}_fk_update"],
    CLAIMLIST: [f"{CLAIMLIST}_fk_delete", f"{CLAIMLIST}_fk_update"],
}


FOREIGN_KEY = f"{CLAIM}_claim_list_id_fk_{CLAIMLIST}_id"


def create(apps: Any, schema_editor: Any) -> None:
    """PostgreSQL: the database FK replaced by the triggers (a migration's RunPython).
    SQLite keeps its FK: deferred to COMMIT there, as a flush's DELETEs in any order need."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, CLAIM)
    for name, c in constraints.items():
        if c["foreign_key"] == (CLAIMLIST, "id"):
            schema_editor.execute(f'ALTER TABLE {CLAIM} DROP CONSTRAINT "{name}"')
    schema_editor.execute(POSTGRESQL, None)  # no parameters: its % are its own


def drop(apps: Any, schema_editor: Any) -> None:
    """The reverse migration: the triggers removed, Django's FK back (PostgreSQL)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, names in TRIGGERS.items():
        for name in names:
            schema_editor.execute(f"DROP TRIGGER {name} ON {table}")
            schema_editor.execute(f"DROP FUNCTION {name}()")
    schema_editor.execute(
        f'ALTER TABLE {CLAIM} ADD CONSTRAINT "{FOREIGN_KEY}" FOREIGN KEY (claim_list_id) '
        f"REFERENCES {CLAIMLIST} (id) DEFERRABLE INITIALLY DEFERRED"
    )


def installed(connection: Any) -> set[str]:
    """What checks a claim's list in this database: the names of these triggers that
    exist (PostgreSQL), or "foreign key" when annotation_claim has the FK."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, CLAIM)
        found = {
            "foreign key" for c in constraints.values() if c["foreign_key"] == (CLAIMLIST, "id")
        }
        if connection.vendor == "postgresql":
            names = [n for names in TRIGGERS.values() for n in names]
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname = ANY(%s)",
                [names],
            )
            found |= {r[0] for r in cursor.fetchall()}
        return found
