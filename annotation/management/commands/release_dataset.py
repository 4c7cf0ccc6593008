from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ... import release
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Release a project as a dataset: a folder the Hub's `datasets` library reads (one "
        "configuration per table, Parquet and JSON lines), a dataset card (README.md) and "
        "croissant.json; --zip also zips it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("out", type=Path, help="the release folder (new, or empty)")
        parser.add_argument("--zip", action="store_true", help="also write OUT.zip")
        parser.add_argument(
            "--license",
            choices=release.LICENCES,
            help="default: cc-by-4.0, or the licence of the release the project was imported "
            "from (as every option not given: study.json's)",
        )
        parser.add_argument(
            "--language", action="append", help="the data's language (repeat; default: en)"
        )
        parser.add_argument(
            "--task-category",
            action="append",
            choices=release.TASK_CATEGORIES,
            help="the Hub's task category (repeat; default: text-classification)",
        )
        parser.add_argument(
            "--source-licence",
            action="append",
            choices=release.available_licences(),
            help="a licence file of the source data under fixtures/, copied into LICENSES/",
        )
        parser.add_argument("--pretty-name", help="the dataset's title")
        for name in release.FREE_TEXT:
            parser.add_argument(
                f"--{name.replace('_', '-')}-file",
                type=Path,
                help=f"the card's {name.replace('_', ' ')} from this file (default: written "
                "from the project)",
            )
        parser.add_argument("--bootstrap", type=int, help="resamples (0-10000; default 1000)")

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        if opts["bootstrap"] is not None and not 0 <= opts["bootstrap"] <= 10_000:
            raise CommandError("--bootstrap must be between 0 and 10000", returncode=2)
        given: dict[str, Any] = {}
        for name in release.FREE_TEXT:
            path = opts[f"{name}_file"]
            try:
                if path:
                    given[name] = path.read_text(encoding="utf-8")
            except OSError as e:
                raise CommandError(f"{path}: cannot read the file ({e}).") from e
        for name, opt in (
            ("license", "license"),
            ("languages", "language"),
            ("task_categories", "task_category"),
            ("pretty_name", "pretty_name"),
            ("source_licences", "source_licence"),
            ("bootstrap", "bootstrap"),
        ):
            if opts[opt] is not None:
                given[name] = tuple(opts[opt]) if isinstance(opts[opt], list) else opts[opt]
        # the project's options (an imported project's: its release's), those given instead
        options = replace(release.project_options(project), **given)
        bars: dict[str, tqdm] = {}

        def progress(table: str, rows: int) -> None:
            if table not in bars:
                for bar in bars.values():
                    bar.close()
                bars[table] = tqdm(desc=table, unit=" rows", file=self.stderr._out, disable=None)
            bars[table].update(rows - bars[table].n)

        try:
            built = release.build_release(
                project, opts["out"], options, progress=progress, make_zip=opts["zip"]
            )
        except release.ReleaseRefused as e:
            raise CommandError(str(e), returncode=2) from e
        finally:
            for bar in bars.values():
                bar.close()
        rows = ", ".join(f"{name} {n}" for name, n in built.rows.items())
        where = f"{built.folder}" + (f" and {built.zip}" if built.zip else "")
        self.stdout.write(self.style.SUCCESS(f"Released {project.name!r} into {where}: {rows}"))
