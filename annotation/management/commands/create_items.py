from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...models import (
    Item,
    Project,
    System,
    assign,
    comparison_items,
    segment_items,
    verification_items,
)
from ._project import find_project


def _system(project: Project, name: str) -> System:
    system = project.systems.filter(name=name).first()
    if system is None:
        known = ", ".join(project.systems.values_list("name", flat=True)) or "none"
        raise CommandError(f"No system {name!r} in {project}; known: {known}.")
    return system


class Command(BaseCommand):
    help = "Create comparison, verification or segment items and assign them to annotators."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or name")
        parser.add_argument("kind", choices=[k for k, _ in Item.KINDS])
        parser.add_argument("systems", nargs="*",
                            help="comparison: two extractor systems; verification: one")
        parser.add_argument("--n", type=int, default=50, help="verification: claims to sample")
        parser.add_argument("--stratify", nargs="*", default=[], choices=["domain", "source_model"])
        parser.add_argument("--k", default="2", help="annotators per overlap item, or 'all'")
        parser.add_argument("--fraction", type=float, default=0.2, help="share of items with overlap")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        kind, names = opts["kind"], opts["systems"]
        expected = {Item.COMPARISON: 2, Item.VERIFICATION: 1, Item.SEGMENT: 0}[kind]
        if len(names) != expected:
            raise CommandError(f"{kind} items need {expected} system name(s), got {len(names)}.")
        systems = [_system(project, name) for name in names]
        k = project.annotators().count() if opts["k"] == "all" else int(opts["k"])
        try:
            with transaction.atomic():
                if kind == Item.COMPARISON:
                    items = comparison_items(project=project, system_a=systems[0], system_b=systems[1])
                elif kind == Item.VERIFICATION:
                    items = verification_items(project=project, system=systems[0], n=opts["n"],
                                               seed=opts["seed"], stratify=tuple(opts["stratify"]))
                else:
                    items = segment_items(project=project)
                n = assign(items, project=project, k=k, fraction=opts["fraction"], seed=opts["seed"])
        except ValueError as e:
            raise CommandError(str(e)) from e
        self.stdout.write(self.style.SUCCESS(f"{len(items)} {kind} item(s), {n} assignment(s)."))
