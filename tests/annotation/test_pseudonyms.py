"""Annotators are numbered from A1 in new projects; researchers are R<n> (issue 13,
defect 8). Projects made before migration 0013 keep their members' pseudonyms."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Membership, Project

BEFORE = [("annotation", "0012_importscale_importjob")]
AFTER = [("annotation", "0013_pages2_pseudonyms")]


def names(project: Project) -> dict[str, str]:
    return {m.user.username: m.pseudonym for m in project.memberships.select_related("user")}


def test_annotators_start_at_a1_after_the_researcher(users: dict[str, User]) -> None:
    p = Project.create_with_owner(Project(name="new"), users["alice"])
    p.add_member(users["bob"], Membership.ANNOTATOR)
    p.add_member(users["erin"], Membership.RESEARCHER)
    p.add_member(users["carol"], Membership.ANNOTATOR)
    assert names(p) == {"alice": "R1", "bob": "A1", "erin": "R2", "carol": "A2"}


def test_a_role_change_keeps_an_annotators_pseudonym(users: dict[str, User]) -> None:
    p = Project.create_with_owner(Project(name="new"), users["alice"])
    p.add_member(users["bob"], Membership.ANNOTATOR)
    p.add_member(users["alice"], Membership.ANNOTATOR)  # a researcher who now annotates
    p.add_member(users["bob"], Membership.RESEARCHER)  # bob's answers stay filed as A1
    p.add_member(users["carol"], Membership.ANNOTATOR)
    assert names(p) == {"alice": "A2", "bob": "A1", "carol": "A3"}


@pytest.mark.django_db(transaction=True)
def test_existing_projects_keep_their_pseudonyms() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    old_user = apps.get_model("auth", "User")
    old_project = apps.get_model("annotation", "Project").objects.create(name="old")
    for n, (name, role) in enumerate(
        [("olga", "researcher"), ("paul", "annotator"), ("quinn", "annotator")], start=1
    ):
        user = old_user.objects.create(username=name)
        apps.get_model("annotation", "Membership").objects.create(
            project=old_project, user=user, role=role, number=n
        )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    project = Project.objects.get(name="old")
    assert names(project) == {"olga": "A1", "paul": "A2", "quinn": "A3"}
    # newcomers continue the old numbering, so no two members share a name
    project.add_member(User.objects.create(username="rita"), Membership.ANNOTATOR)
    project.add_member(User.objects.create(username="sam"), Membership.RESEARCHER)
    assert names(project) == {"olga": "A1", "paul": "A2", "quinn": "A3", "rita": "A4", "sam": "R1"}
