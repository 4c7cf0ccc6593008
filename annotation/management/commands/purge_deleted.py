"""Delete for good the items and projects deleted more than DELETED_KEEP_DAYS ago (run
it daily, e.g. from cron: `python manage.py purge_deleted`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from ... import manage


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        done = manage.purge()
        self.stdout.write(
            f"Purged {done['projects']} project(s) and {done['items']} item(s) deleted more"
            f" than {settings.DELETED_KEEP_DAYS} days ago."
        )
