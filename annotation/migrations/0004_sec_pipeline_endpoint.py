"""Runs name an endpoint instead of carrying a URL: existing runs get "default"; a
base_url they held is kept as `unused_base_url` (recorded, never sent anything)."""

from django.db import migrations


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    PipelineRun = apps.get_model("annotation", "PipelineRun")
    for run in PipelineRun.objects.all():
        config = dict(run.config or {})
        if "endpoint" in config and "base_url" not in config:
            continue
        config.setdefault("endpoint", "default")
        base_url = config.pop("base_url", "")
        if base_url:
            config["unused_base_url"] = base_url
        run.config = config
        run.save(update_fields=["config"])


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    PipelineRun = apps.get_model("annotation", "PipelineRun")
    for run in PipelineRun.objects.all():
        config = dict(run.config or {})
        config.pop("endpoint", None)
        config["base_url"] = config.pop("unused_base_url", "")
        run.config = config
        run.save(update_fields=["config"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0003_pipeline_runs")]

    operations = [migrations.RunPython(forwards, backwards)]
