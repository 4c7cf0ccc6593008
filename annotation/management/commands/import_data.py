from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ...formats import FORMATS, IMPORT_CHOICES
from ...import_options import ImportOptions, ImportOptionsError
from ...ingest import ImportFailed, import_file, preview_file
from ...models import Project
from ...release.load import import_release
from ._project import find_project


class Command(BaseCommand):
    help = "Import a file into a project, in one of the formats the platform reads: " + ", ".join(
        IMPORT_CHOICES[1:]
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--format",
            default="auto",
            choices=IMPORT_CHOICES,
            help="; ".join(f"{n}: {FORMATS[n].description}" for n in IMPORT_CHOICES[1:]),
        )
        parser.add_argument("--system", default="", help="system name for VeriScore claim files")
        parser.add_argument("--source-model", default="", help="model that wrote the responses")
        parser.add_argument(
            "--verifier",
            default="",
            help="system name for VeriScore verification labels (default: <system>-verifier)",
        )
        parser.add_argument(
            "--domain",
            default="",
            help="FELM: the domain of a per-domain file (default: the file's name)",
        )
        parser.add_argument(
            "--mapping",
            type=Path,
            help="a mapping file (YAML or JSON) of JMESPath expressions for any other layout",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="validate the file and show its first records as they would be stored; "
            "import nothing",
        )
        parser.add_argument(
            "--update",
            action="store_true",
            help="replace stored documents and claim lists that differ (never those "
            "with annotators' answers)",
        )

    def _release(self, project: Project, path: Path, *, dry_run: bool) -> None:
        """A release (folder or zip) into a new project (annotation/release/load.py)."""
        if dry_run:
            raise CommandError("a release has no dry run: import it into a new project")
        if not path.exists():
            raise CommandError(f"{path}: cannot read the release (no such file or folder).")
        try:
            summary = import_release(project, path)
        except ImportFailed as e:
            raise CommandError(str(e), returncode=2) from e
        self.stdout.write(self.style.SUCCESS(f"{path}: {summary}"))

    def _options(self, opts: dict[str, Any]) -> ImportOptions:
        """The import's options; a bad value exits with status 2 naming the option."""
        mapping = ""
        if opts["mapping"]:
            try:
                mapping = opts["mapping"].read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise CommandError(f"{opts['mapping']}: cannot read the mapping ({e}).") from e
        try:
            return ImportOptions(
                fmt=opts["format"],
                system=opts["system"],
                source_model=opts["source_model"],
                verifier=opts["verifier"],
                domain=opts["domain"],
                update=opts["update"],
                mapping=mapping,
                mapping_file=str(opts["mapping"] or "mapping"),
            )
        except ImportOptionsError as e:
            raise CommandError(f"--{e.field.replace('_', '-')}: {e.message}", returncode=2) from e

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        path: Path = opts["file"]
        options = self._options(opts)
        if options.archive:
            self._release(project, path, dry_run=opts["dry_run"])
            return
        if not path.is_file():
            raise CommandError(f"{path}: cannot read the file (no such file).")
        if opts["dry_run"]:
            try:
                preview = preview_file(path=path, file=str(path), options=options)
            except ImportFailed as e:
                raise CommandError(str(e), returncode=2) from e
            self.stdout.write(f"{path}: {preview}")
            return
        bars: dict[str, tqdm] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "validated":
                return
            if phase not in bars:
                for bar in bars.values():
                    bar.close()
                bars[phase] = tqdm(
                    total=total or None,
                    desc=f"{phase} {path.name}",
                    unit=" records",
                    file=self.stderr._out,
                    disable=None,
                )
            bars[phase].update(done - bars[phase].n)

        try:
            summary = import_file(
                project=project,
                path=path,
                file=str(path),
                options=options,
                progress=progress,
            )
        except ImportFailed as e:
            raise CommandError(str(e), returncode=2) from e
        except OSError as e:
            raise CommandError(f"{path}: cannot read the file ({e}).") from e
        finally:
            for bar in bars.values():
                bar.close()
        self.stdout.write(self.style.SUCCESS(f"{path}: {summary}"))
