# Item.kind is validated against the kinds registry (kinds/schema.py) instead of having
# choices: adding a kind needs no migration after this one.

from django.db import migrations, models

import annotation.kinds.schema


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_imports2_fk_indexes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="item",
            name="kind",
            field=models.CharField(
                max_length=20, validators=[annotation.kinds.schema.validate_kind]
            ),
        ),
    ]
