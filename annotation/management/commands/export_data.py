from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import formats, kinds
from ._project import find_project

OPTIONS = ("source", "system", "verifier", "source_model", "kind")


class Command(BaseCommand):
    help = (
        "Write one of the API's exports (GET /api/projects/<id>/exports/<name>) to a file "
        "or to standard output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("--format", required=True, choices=formats.EXPORTS)
        parser.add_argument(
            "--source",
            default="",
            help="felm.jsonl / factscore.jsonl: 'gold' (the default once annotators gave "
            "gold labels) or a reference system, e.g. felm-labels",
        )
        parser.add_argument(
            "--system",
            default="",
            help="the extractor whose claims to write (default: the only one)",
        )
        parser.add_argument("--verifier", default="", help="veriscore.jsonl / safe.json: labels")
        parser.add_argument("--source-model", default="", help="only this model's documents")
        parser.add_argument("--kind", default="", choices=("", *kinds.names()), help="answers.csv")
        parser.add_argument("--output", type=Path, help="the file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        try:
            text, _ = formats.export(
                project, opts["format"], params={k: opts[k] for k in OPTIONS if opts[k]}
            )
        except ValueError as e:
            raise CommandError(f"{opts['format']}: {e}", returncode=2) from e
        if opts["output"] is None:
            self.stdout.write(text, ending="")
            return
        try:
            opts["output"].write_text(text, encoding="utf-8")
        except OSError as e:
            raise CommandError(f"{opts['output']}: cannot write the file ({e}).") from e
        self.stderr.write(f"{opts['output']}: {opts['format']} of project {project.name!r}")
