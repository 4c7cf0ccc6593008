"""python manage.py hiring_payments PROJECT [--bonus] [-o FILE]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ... import hiring
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Write a project's payments export: per hired worker the worker id and extra "
        "parameters, status, real items submitted, check accuracy with its 95%% Wilson "
        "interval, active minutes and the bonus at the hiring policy's rates (CSV), or "
        "with --bonus the marketplace's bulk-bonus lines (worker_id,amount)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or exact name")
        parser.add_argument("--bonus", action="store_true", help="worker_id,amount lines")
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = find_project(options["project"])
        text = hiring.payments_file(project, "bonus" if options["bonus"] else "csv")
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
