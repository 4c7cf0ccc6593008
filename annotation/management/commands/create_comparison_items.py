from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...models import System, assign, comparison_items
from ._project import find_project


class Command(BaseCommand):
    help = "Create comparison items for two systems' claim lists and assign them to annotators."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("system_a")
        parser.add_argument("system_b")
        parser.add_argument("--k", default="2", help="annotators per overlap item, or 'all'")
        parser.add_argument("--fraction", type=float, default=0.2, help="share of items with overlap")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        systems = []
        for name in (opts["system_a"], opts["system_b"]):
            system = project.systems.filter(name=name).first()
            if system is None:
                known = ", ".join(project.systems.values_list("name", flat=True)) or "none"
                raise CommandError(f"No system {name!r} in {project}; known: {known}.")
            systems.append(system)
        k = project.annotators().count() if opts["k"] == "all" else int(opts["k"])
        try:
            with transaction.atomic():
                items = comparison_items(project=project, system_a=systems[0], system_b=systems[1])
                n = assign(items, project=project, k=k, fraction=opts["fraction"], seed=opts["seed"])
        except ValueError as e:
            raise CommandError(str(e)) from e
        self.stdout.write(self.style.SUCCESS(f"{len(items)} item(s), {n} assignment(s)."))
