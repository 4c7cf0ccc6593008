from __future__ import annotations

from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.management.commands.load_demo import ANNOTATORS, DEMO_PROJECT, RESEARCHER
from annotation.models import Assignment, Document, Item, Project


def counts() -> tuple[int, int, int, int]:
    return (Project.objects.count(), Document.objects.count(), Item.objects.count(),
            Assignment.objects.count())


def test_the_demo_loads_once_and_prints_the_logins(db: None, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("load_demo")
    out = capsys.readouterr().out
    for username, password in [RESEARCHER, *ANNOTATORS]:
        assert username in out and password in out
        assert User.objects.get(username=username).check_password(password)
    project = Project.objects.get(name=DEMO_PROJECT)
    assert project.annotators().count() == 3
    assert Document.objects.filter(external_id="veriscore-figure-5").exists()
    assert Item.objects.filter(project=project).count() == 31  # 30 biographies + Figure 5
    first = counts()
    call_command("load_demo")
    assert counts() == first
