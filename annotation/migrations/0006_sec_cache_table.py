"""The database cache's table (settings.CACHES), so `migrate` alone makes a working
site: the API throttle and login throttling count in it across processes."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):  # type: ignore[no-untyped-def]
    # Does nothing when the cache is not the database (REDIS_URL) or the table exists.
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0005_sec_researchers_group")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
