# The claim -> claim list foreign key checked by statement-level triggers on PostgreSQL
# (annotation/claim_fk.py); SQLite's table and FK stay as they are.

import django.db.models.deletion
from django.db import migrations, models

from annotation import claim_fk


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0022_import_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="claim",
                    name="claim_list",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="claims",
                        to="annotation.claimlist",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(claim_fk.create, claim_fk.drop)],
        ),
    ]
