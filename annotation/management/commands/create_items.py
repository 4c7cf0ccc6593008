from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import kinds, operations
from ...models import Project, System
from ._project import find_project


def _system(project: Project, name: str) -> System:
    system = project.systems.filter(name=name).first()
    if system is None:
        known = ", ".join(project.systems.values_list("name", flat=True)) or "none"
        raise CommandError(f"No system {name!r} in {project}; known: {known}.")
    return system


class Command(BaseCommand):
    help = (
        "Create items of one kind (comparison, verification, segment, atomic) and assign "
        "them to annotators."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("kind", choices=kinds.names())
        parser.add_argument(
            "systems",
            nargs="*",
            help="comparison: two extractor systems; verification, atomic: one",
        )
        parser.add_argument("--n", type=int, default=50, help="verification: claims to sample")
        parser.add_argument("--stratify", nargs="*", default=[], choices=["domain", "source_model"])
        parser.add_argument("--k", default="2", help="annotators per overlap item, or 'all'")
        parser.add_argument(
            "--fraction", type=float, default=0.2, help="share of items with overlap"
        )
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        kind, names = opts["kind"], opts["systems"]
        spec = kinds.get(kind)
        if len(names) != spec.cli_systems:
            raise CommandError(
                f"{kind} items need {spec.cli_systems} system name(s), got {len(names)}."
            )
        systems = [_system(project, name).pk for name in names]
        policy = {
            "all_annotators": opts["k"] == "all",
            "k": 1 if opts["k"] == "all" else opts["k"],
            "fraction": opts["fraction"],
            "seed": opts["seed"],
        }
        form = spec.items_form(project, {**policy, **spec.cli_data(systems, opts)})
        if not form.is_valid():
            raise CommandError(
                "; ".join(
                    " ".join(v) if k == "__all__" else f"{k}: {' '.join(v)}"  # type: ignore[arg-type]
                    for k, v in form.errors.items()
                )
            )
        try:
            items, n = operations.create_items(project, form)
        except ValueError as e:
            raise CommandError(str(e)) from e
        self.stdout.write(self.style.SUCCESS(f"{len(items)} {kind} item(s), {n} assignment(s)."))
