from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import formats, kinds
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Write one of the API's exports (GET /api/projects/<id>/exports/<name>) to a file "
        "or to standard output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument(
            "--format",
            required=True,
            choices=list(formats.EXPORTS),
            help="; ".join(f"{n}: {f.description}" for n, f in formats.EXPORTS.items()),
        )
        for param in formats.PARAMS:  # the writers' parameters, as the API's
            choices = ("", *kinds.names()) if param == "kind" else None
            parser.add_argument(
                f"--{param.replace('_', '-')}",
                default="",
                choices=choices,
                help=formats.param_help(param),
            )
        parser.add_argument("--output", type=Path, help="the file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        try:
            text, _ = formats.export(
                project, opts["format"], params={k: opts[k] for k in formats.PARAMS if opts[k]}
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
