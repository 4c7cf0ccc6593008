from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from ...ingest import import_file
from ...models import Membership, Project, System, assign, comparison_items

DEMO_PROJECT = "Demo: claim extraction and verification"
RESEARCHER = ("researcher", "demo-researcher")
ANNOTATORS = [("annotator1", "demo-annotator1"), ("annotator2", "demo-annotator2"),
              ("annotator3", "demo-annotator3")]
INSTRUCTIONS = """You will see a source text and two lists of claims extracted from it by two \
automatic methods (their names are hidden and their order is random).

Decide which claim list better covers the verifiable content of the source text: facts \
about the world that could be checked, stated faithfully and without claims about the \
author's private life. Then say whether it was hard to decide (the lists are similarly \
good or bad), and justify your choice in one or two sentences.

Keyboard: 1 / 2 choose a list, y / n answer "hard to decide", j writes the justification, \
Ctrl+Enter submits and opens the next item."""


def _user(username: str, password: str, **extra: Any) -> User:
    user, _ = User.objects.get_or_create(username=username, defaults=extra)
    user.set_password(password)
    user.save()
    return user


class Command(BaseCommand):
    help = "Create the demo project from the real data in fixtures/demo (safe to run again)."

    def handle(self, *args: Any, **opts: Any) -> None:
        researcher = _user(*RESEARCHER, is_staff=True, is_superuser=True)
        annotators = [_user(u, p) for u, p in ANNOTATORS]
        if not Project.objects.filter(name=DEMO_PROJECT).exists():
            self._build(researcher, annotators)
        self.stdout.write(self.style.SUCCESS("Demo logins (http://127.0.0.1:8000/):"))
        for username, password in [RESEARCHER, *ANNOTATORS]:
            self.stdout.write(f"  {username:<12} {password}")

    @transaction.atomic
    def _build(self, researcher: User, annotators: list[User]) -> None:
        project = Project.objects.create(
            name=DEMO_PROJECT, instructions=INSTRUCTIONS, created_by=researcher,
            description="FActScore biographies (InstructGPT) and the VeriScore paper's examples.",
        )
        project.add_member(researcher, Membership.RESEARCHER)
        for user in annotators:
            project.add_member(user, Membership.ANNOTATOR)
        demo = settings.BASE_DIR / "fixtures" / "demo"
        for name in ("factscore_InstructGPT_30.jsonl", "veriscore_figure5.jsonl"):
            path = demo / name
            import_file(project=project, text=path.read_text(), file=name)
        systems = {s.name: s for s in System.objects.filter(project=project)}
        items = comparison_items(
            project=project, system_a=systems["factscore-model-facts"],
            system_b=systems["factscore-human-facts"],
        ) + comparison_items(project=project, system_a=systems["safe"], system_b=systems["veriscore"])
        assign(items, project=project, k=len(annotators), fraction=0.2, seed=0)
        self.stdout.write(f"Created {DEMO_PROJECT!r} with {len(items)} comparison items.")
