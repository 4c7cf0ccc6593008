"""Issue 43, defect 14: the demo's instructions have a worked example of each kind the
demo holds, and the instructions list the keys of the kinds the project has (a worker
reads them before any item is theirs), not of the others."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring, kinds
from annotation.ingest import import_file
from annotation.kinds.verification import verification_items
from annotation.management.commands.load_demo import ANNOTATORS
from annotation.models import Assignment, Item, Membership, Project, System
from tests.conftest import SYSTEM_A, verification_line


def test_the_demo_instructions_show_a_worked_example_of_each_kind(demo: Project) -> None:
    examples = hiring.examples(demo)
    present = set(demo.items.values_list("kind", flat=True))
    assert sorted(e.item.kind for e in examples) == sorted(present)
    for ex in examples:  # an example is never work: nobody holds it
        assert ex.explanation.strip()
        assert not Assignment.objects.filter(item=ex.item).exists(), ex.item.kind
    client = Client()
    client.force_login(User.objects.get(username=ANNOTATORS[0][0]))
    page = client.get(reverse("instructions", args=[demo.pk])).content.decode()
    assert "Worked examples" in page
    for spec in kinds.all_specs():
        assert f"· {spec.title}</h3>" in page, spec.name
    assert "Mount Katahdin" in page and "Lanny Flaherty" in page


def test_the_instructions_list_the_keys_of_the_projects_kinds_only(
    users: dict[str, User],
) -> None:
    """A project of verification items only: its new annotator (no item yet) reads the
    verification keys, and no other kind's."""
    project = Project.objects.create(name="claims only", instructions="Check each claim.")
    project.add_member(users["alice"], Membership.RESEARCHER)
    project.add_member(users["dave"], Membership.ANNOTATOR)
    import_file(project=project, text=verification_line(0), file="v.jsonl")
    system = System.objects.get(project=project, name=SYSTEM_A)
    verification_items(project=project, system=system, n=5, seed=0)
    assert not Assignment.objects.filter(annotator=users["dave"]).exists()
    client = Client()
    client.force_login(users["dave"])
    page = client.get(reverse("instructions", args=[project.pk])).content.decode()
    assert "Keyboard (Verification)" in page
    for spec in kinds.all_specs():
        if spec.name != Item.VERIFICATION:
            assert f"Keyboard ({spec.title})" not in page, spec.name
