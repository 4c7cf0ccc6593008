from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation import reports
from annotation.management.commands.load_demo import ANNOTATORS, DEMO_PROJECT, RESEARCHER
from annotation.models import Assignment, Document, Evidence, Item, Project, Verdict


def test_make_demo_prints_the_address_it_serves() -> None:
    """`make demo PORT=8101` printed the logins under http://127.0.0.1:8000/."""
    root = Path(__file__).parents[2]
    commands = subprocess.run(
        ["make", "-n", "-C", str(root), "demo", "HOST=192.0.2.7", "PORT=8101"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "manage.py load_demo --host 192.0.2.7 --port 8101" in commands
    assert "runserver --insecure 192.0.2.7:8101" in commands


def counts() -> tuple[int, int, int, int]:
    return (
        Project.objects.count(),
        Document.objects.count(),
        Item.objects.count(),
        Assignment.objects.count(),
    )


def test_the_demo_loads_once_and_prints_the_logins(db: None, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("load_demo", host="192.0.2.7", port="8101")
    out = capsys.readouterr().out
    assert "Demo logins (http://192.0.2.7:8101/)" in out  # what `make demo` serves
    for username, password in [RESEARCHER, *ANNOTATORS]:
        assert username in out and password in out
        assert User.objects.get(username=username).check_password(password)
    project = Project.objects.get(name=DEMO_PROJECT)
    assert project.annotators().count() == 3
    assert Document.objects.filter(external_id="veriscore-figure-5").exists()
    kinds = Counter(Item.objects.filter(project=project).values_list("kind", flat=True))
    # 3 x 30 biographies + Figure 5; 25 claims of the VeriScore sample run + 9 demos + the
    # 5 claims of Tables 8 and 9; 3 biographies + FELM's Figure 5
    # and the worked examples: the Lanny Flaherty biography as segments and as facts
    assert kinds == {"comparison": 91, "verification": 39, "segment": 5, "atomic": 4}
    verdicts = Verdict.objects.filter(claim__claim_list__document__project=project)
    assert verdicts.filter(system__name="veriscore-human-labels").count() == 13
    assert Evidence.objects.filter(claim__claim_list__document__project=project).count() > 250
    # the keys it names are the pages' keys: w writes the justification, j moves on
    assert "w writes the justification" in project.instructions
    assert "j writes" not in project.instructions
    first = counts()
    call_command("load_demo")
    assert counts() == first


@pytest.mark.slow
def test_the_demo_report_compares_extractors_and_scores(db: None) -> None:
    call_command("load_demo")
    project = Project.objects.get(name=DEMO_PROJECT)
    models = set(
        project.documents.filter(external_id__contains=":").values_list("source_model", flat=True)
    )
    assert {"InstructGPT", "ChatGPT", "PerplexityAI"} <= models
    report = reports.build_report(project, bootstrap=20, with_charts=False)
    pairs = {
        (r["system A"], r["system B"], r["unit"]): r
        for r in report.table("extractor-similarity").as_dicts()
    }
    facts = pairs[("factscore-human-facts", "factscore-model-facts", "sentence")]
    assert facts["documents"] == 90 and 0 < facts["exact match"] < facts["ROUGE-L F1"] < 1
    correlations = report.table("score-correlations").as_dicts()
    by_model = [
        r
        for r in correlations
        if r["level"] == "system: source model" and "factscore-human-labels" in str(r["score A"])
    ]
    assert by_model and by_model[0]["n"] == 3 and by_model[0]["Pearson r"] is not None
