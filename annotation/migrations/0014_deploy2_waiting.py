from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_pages2_pseudonyms"),
    ]

    operations = [
        migrations.AlterField(
            model_name="pipelinechunk",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("waiting", "Waiting on the provider's batch"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                ],
                default="queued",
                max_length=20,
            ),
        ),
    ]
