"""python manage.py prolific PROJECT INVITE {pull,approve,pay,reconcile}"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...prolific import services
from ...prolific.client import ProlificError
from ...prolific.models import ProlificStudy
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Work with an invite's Prolific study through the project's Prolific workspace: "
        "pull its submissions, approve those that completed here, pay the bonuses due "
        "(exactly once), or reconcile the bonuses a killed process left unconfirmed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or exact name")
        parser.add_argument("invite", type=int, help="the invite's id")
        parser.add_argument("action", choices=["pull", "approve", "pay", "reconcile"])

    def handle(self, *args: Any, **options: Any) -> None:
        project = find_project(options["project"])
        study = ProlificStudy.objects.filter(
            invite__project=project, invite_id=options["invite"]
        ).first()
        if study is None:
            raise CommandError(
                f"invite {options['invite']} of {project.name} has no Prolific study"
            )
        action = options["action"]
        try:
            if action == "pull":
                result: Any = len(services.pull(study))
            elif action == "approve":
                result = services.approve(study)
            elif action == "pay":
                result = services.pay_bonuses(study)
            else:
                result = services.reconcile(study)
        except (ProlificError, ValueError) as e:
            raise CommandError(str(e)) from None
        self.stdout.write(f"{action}: {result}")
