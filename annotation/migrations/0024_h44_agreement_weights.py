# Project.agreement_weights (issue 44): a researcher's own distances and agreement weights
# per agreement field.

from django.db import migrations, models

import annotation.models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0023_claim_fk_triggers"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="agreement_weights",
            field=models.JSONField(
                blank=True,
                default=dict,
                validators=[annotation.models.validate_agreement_weights],
            ),
        ),
    ]
