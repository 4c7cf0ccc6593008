from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...ingest import FORMATS, ImportFailed, import_file
from ._project import find_project


class Command(BaseCommand):
    help = "Import a JSONL file (canonical, VeriScore claims, FActScore labelled) into a project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", default="auto", choices=("auto", *FORMATS))
        parser.add_argument("--system", default="", help="system name for VeriScore claim files")
        parser.add_argument("--source-model", default="", help="model that wrote the responses")
        parser.add_argument("--verifier", default="",
                            help="system name for VeriScore verification labels (default: <system>-verifier)")

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        path: Path = opts["file"]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CommandError(f"{path}: cannot read the file ({e}).") from e
        try:
            summary = import_file(
                project=project, text=text, file=str(path), fmt=opts["format"],
                system=opts["system"], source_model=opts["source_model"], verifier=opts["verifier"],
            )
        except ImportFailed as e:
            raise CommandError(str(e)) from e
        self.stdout.write(self.style.SUCCESS(f"{path}: {summary}"))
