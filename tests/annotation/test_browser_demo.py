"""The demo as people see it (issue 13): every annotator page, on every item of the demo
(real FActScore, VeriScore and FELM data, long search-result URLs included), fits a
390x844 phone and a 1366x900 laptop without sideways scrolling; axe-core finds no serious
or critical violation on the annotator and researcher pages at both widths (the Django
admin and the API docs aside), and the researcher pages fit too (wide tables scroll inside
their own focusable region). One browser per test; the demo is built by `load_demo`."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db.models import Count
from django.urls import reverse

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.management.commands.load_demo import ANNOTATORS, RESEARCHER
from annotation.models import Assignment, ImportJob, Item, Project
from tests.browser import login

from .test_browser_layout import SIZES, serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIDEWAYS = "document.documentElement.scrollWidth - window.innerWidth"


def open_all_items(project: Project, user: User) -> list[Assignment]:
    """Every verification, segment and atomic item of the demo (the long URLs are in
    some of them) and the user's own comparisons, in queue order."""
    for item in project.items.exclude(kind=Item.COMPARISON).exclude(assignments__annotator=user):
        Assignment.objects.create(item=item, annotator=user, position=10_000 + item.pk)
    return list(Assignment.objects.filter(annotator=user).order_by("position", "pk"))


def check(page, url: str, problems: list[str], *, axe: bool) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.wait_for_load_state("load")
    look(page, url, problems, axe=axe)


def look(page, url: str, problems: list[str], *, axe: bool) -> None:  # type: ignore[no-untyped-def]
    width = page.viewport_size["width"]
    sideways = page.evaluate(SIDEWAYS)
    if sideways > 0:
        problems.append(f"{url} at {width}px scrolls sideways by {sideways}px")
    if axe:
        problems += [f"{url} at {width}px: {v}" for v in serious(page)]


@pytest.mark.parametrize("width,height", SIZES)
def test_every_annotator_page_of_the_demo_fits_and_passes_axe(
    page, demo: Project, width: int, height: int
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    username, password = ANNOTATORS[0]
    user = User.objects.get(username=username)
    mine = open_all_items(demo, user)
    page.set_viewport_size({"width": width, "height": height})
    problems: list[str] = []
    check(page, "/login/", problems, axe=True)
    login(page, username, password)
    for url in [reverse("queue", args=[demo.pk]), reverse("instructions", args=[demo.pk])]:
        check(page, url, problems, axe=True)
    axed = set()
    for a in mine:
        kind = a.item.kind
        check(page, reverse("assignment", args=[a.pk]), problems, axe=kind not in axed)
        axed.add(kind)
    assert axed == {Item.COMPARISON, Item.VERIFICATION, Item.SEGMENT, Item.ATOMIC}
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("width,height", SIZES)
def test_the_join_and_training_pages_fit_and_pass_axe(
    page, demo: Project, width: int, height: int
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    training = demo.items.filter(kind=Item.VERIFICATION).order_by("pk").first()
    assert training is not None
    hiring.mark(training, hiring.TRAINING, {"item.label": "supported"}, "Result 1 states it.")
    invite = Invite.objects.create(project=demo, items_per_person=1, completion_code="DEMO-1")
    page.set_viewport_size({"width": width, "height": height})
    problems: list[str] = []
    check(page, f"/join/{invite.key}/?PROLIFIC_PID=w-1", problems, axe=True)
    page.click("button[type=submit]")  # Start
    page.wait_for_selector("#personal-url")
    look(page, "joined", problems, axe=True)

    hire = Hire.objects.get(worker_id="w-1")
    user = hire.membership.user
    hire.membership.acknowledge()
    first = Assignment.objects.get(annotator=user, item=training)
    check(page, reverse("assignment", args=[first.pk]), problems, axe=True)
    first.submit({("item", "label"): "contradicted"}, guideline_version=demo.instructions_version)
    hiring.after_submit(hire.membership)
    check(page, reverse("training_feedback", args=[first.pk]), problems, axe=True)
    hiring.set_state(hire.membership, paused=True)
    check(page, reverse("next_item", args=[demo.pk]), problems, axe=True)
    assert "paused" in page.inner_text("#wait")
    hiring.set_state(hire.membership, paused=False, let_through=True)
    rest = Assignment.objects.filter(annotator=user).exclude(pk=first.pk)
    for a in rest:
        a.skip("Not today.")
    # skips complete a quota only as far as the invite allows them (issue 25)
    Invite.objects.filter(pk=invite.pk).update(skips_allowed=rest.count())
    check(page, reverse("next_item", args=[demo.pk]), problems, axe=True)
    assert page.locator("#completion-code").inner_text() == "DEMO-1"
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("width,height", SIZES)
def test_every_researcher_page_of_the_demo_passes_axe(
    page, demo: Project, width: int, height: int
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    # disagreements to adjudicate: two annotators answer the same claims differently
    shared = Item.objects.filter(project=demo, kind=Item.VERIFICATION).annotate(
        n=Count("assignments")
    )
    for item in shared.filter(n__gte=2)[:3]:
        for a, label in zip(
            item.assignments.all(), ["supported", "contradicted", "supported"], strict=False
        ):
            stances = {
                (f"evidence:{e.rank}", "stance"): "supports" for e in item.claim.evidence.all()
            }
            a.submit(
                {("item", "label"): label, **stances}, guideline_version=demo.instructions_version
            )
    run = demo.pipeline_runs.first()
    assert run is not None
    job = ImportJob.objects.create(
        project=demo,
        file_name="biographies.jsonl",
        path="/nowhere/biographies.jsonl",
        status=ImportJob.FAILED,
        errors=[{"line": 3, "field": "response", "message": "expected a string, got null"}],
    )
    Invite.objects.create(project=demo, cap=30, completion_code="DEMO-2", note="pilot")
    p = demo.pk
    page.set_viewport_size({"width": width, "height": height})
    login(page, *RESEARCHER)
    problems: list[str] = []
    for url in [
        "/",
        reverse("project", args=[p]),
        reverse("project_import", args=[p]),
        reverse("import_job", args=[p, job.pk]),
        reverse("adjudication", args=[p]),
        reverse("adjudication", args=[p]) + "?kind=verification&field=label",
        reverse("pipeline_runs", args=[p]),
        reverse("pipeline_run", args=[p, run.pk]),
        reverse("report", args=[p]) + "?bootstrap=5",
        reverse("hiring", args=[p]),
        reverse("settings_tokens"),
        reverse("project_new"),
    ]:
        check(page, url, problems, axe=True)
    assert problems == [], "\n".join(problems)
