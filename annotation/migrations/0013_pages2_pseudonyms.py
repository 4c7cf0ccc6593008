"""Annotators are numbered from A1 in new projects (researchers are R<n>). Members of
existing projects keep the pseudonym they had (A<number>), so exports stay comparable."""

from django.db import migrations, models


def keep_existing(apps, schema_editor):  # type: ignore[no-untyped-def]
    Membership = apps.get_model("annotation", "Membership")
    for m in Membership.objects.all().only("pk", "number"):
        Membership.objects.filter(pk=m.pk).update(pseudonym=f"A{m.number}")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_importscale_importjob"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="pseudonym",
            field=models.CharField(default="", max_length=20),
            preserve_default=False,
        ),
        migrations.RunPython(keep_existing, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="membership",
            constraint=models.UniqueConstraint(
                fields=("project", "pseudonym"), name="unique_pseudonym"
            ),
        ),
    ]
