from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import kinds, operations
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Create items of one kind and assign them to annotators: "
        "create_items <project> <kind> [the kind's systems and options] [--k --fraction --seed]."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        by_kind = parser.add_subparsers(
            dest="kind", required=True, metavar="kind", help=", ".join(kinds.names())
        )
        for spec in kinds.all_specs():
            sub = by_kind.add_parser(spec.name, help=f"{spec.title} items")
            spec.add_arguments(sub)  # its systems and options
            sub.add_argument("--k", default="2", help="annotators per overlap item, or 'all'")
            sub.add_argument(
                "--fraction", type=float, default=0.2, help="share of items with overlap"
            )
            sub.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        spec = kinds.get(opts["kind"])

        def system(name: str) -> int:
            found = project.systems.filter(name=name).values_list("pk", flat=True).first()
            if found is None:
                known = ", ".join(project.systems.values_list("name", flat=True)) or "none"
                raise CommandError(f"No system {name!r} in {project}; known: {known}.")
            return found

        policy = {
            "all_annotators": opts["k"] == "all",
            "k": 1 if opts["k"] == "all" else opts["k"],
            "fraction": opts["fraction"],
            "seed": opts["seed"],
        }
        form = spec.items_form(project, {**policy, **spec.cli_data(opts, system)})
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
        self.stdout.write(
            self.style.SUCCESS(f"{len(items)} {spec.name} item(s), {n} assignment(s).")
        )
