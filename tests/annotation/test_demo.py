from __future__ import annotations

from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.management.commands.load_demo import ANNOTATORS, DEMO_PROJECT, RESEARCHER
from collections import Counter

from annotation.models import Assignment, Document, Evidence, Item, Project, Verdict


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
    kinds = Counter(Item.objects.filter(project=project).values_list("kind", flat=True))
    # 30 biographies + Figure 5; 25 claims of the VeriScore sample run + 9 demos + the
    # 5 claims of Tables 8 and 9; 3 biographies + FELM's Figure 5
    assert kinds == {"comparison": 31, "verification": 39, "segment": 4, "atomic": 3}
    verdicts = Verdict.objects.filter(claim__claim_list__document__project=project)
    assert verdicts.filter(system__name="veriscore-human-labels").count() == 13
    assert Evidence.objects.filter(claim__claim_list__document__project=project).count() > 250
    first = counts()
    call_command("load_demo")
    assert counts() == first
