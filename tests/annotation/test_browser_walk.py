"""Issue 43: the walk of three people through the demo, at 390 and 1366 px, over every
page each can reach: an annotator (home, queue, instructions with the worked examples,
an item of each kind, settings), the researcher (home, project, its settings,
import and an import's page, agreement weights, adaptive overlap, items'
previews of each kind, adjudication and disagreements, annotators, hiring,
runs and a run, the report, settings, a new project) and a hired worker (the join page,
instructions, a training item, its feedback, the queue, an item). axe-core finds no
violation of any impact on any of them, and none scrolls sideways. One browser; the
demo is built by `load_demo`; every wait is for a state."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count
from django.urls import reverse

from annotation import hiring, kinds
from annotation.hiring import Hire, Invite
from annotation.management.commands.load_demo import ANNOTATORS, RESEARCHER
from annotation.models import Assignment, ImportJob, Item, Project
from tests.browser import login

from .test_browser_demo import look
from .test_browser_layout import SIZES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def check(page, url: str, problems: list[str], *, axe: bool = True) -> None:  # type: ignore[no-untyped-def]
    """Open the page (it must answer 200), wait until its report has filled in (a page
    that computes shows progress first), then look at it."""
    response = page.goto(url)
    assert response is not None and response.ok, (url, response and response.status)
    page.wait_for_load_state("load")
    page.wait_for_selector("#report-progress", state="detached")
    look(page, url, problems, axe=axe)


def disagree(demo: Project) -> None:
    """Claims two annotators label differently: the adjudication and disagreement pages
    and the report have something to show."""
    shared = Item.objects.filter(project=demo, kind=Item.VERIFICATION).annotate(
        n=Count("assignments")
    )
    for item in shared.filter(n__gte=2)[:3]:
        for a, label in zip(item.assignments.all(), ["supported", "contradicted"], strict=False):
            stances = {
                (f"evidence:{e.rank}", "stance"): "supports" for e in item.claim.evidence.all()
            }
            a.submit(
                {("item", "label"): label, **stances}, guideline_version=demo.instructions_version
            )


def annotator_pages(demo: Project, user: User) -> list[str]:
    urls = ["/", reverse("queue", args=[demo.pk]), reverse("instructions", args=[demo.pk])]
    for spec in kinds.all_specs():
        a = Assignment.objects.filter(annotator=user, item__kind=spec.name).first()
        assert a is not None, spec.name
        urls.append(reverse("assignment", args=[a.pk]))
    return [*urls, reverse("settings_tokens")]


def researcher_pages(demo: Project, job: ImportJob) -> list[str]:
    p = demo.pk
    run = demo.pipeline_runs.first()
    assert run is not None
    previews = [
        reverse("item_preview", args=[p, item.pk])
        for item in (demo.items.filter(kind=spec.name).first() for spec in kinds.all_specs())
        if item is not None
    ]
    return [
        "/",
        reverse("project", args=[p]),
        reverse("project_settings", args=[p]),
        reverse("project_import", args=[p]),
        reverse("import_job", args=[p, job.pk]),
        reverse("project_agreement_weights", args=[p]),
        reverse("adaptive_overlap", args=[p]),
        *previews,
        reverse("adjudication", args=[p]),
        reverse("adjudication", args=[p]) + "?kind=verification&field=label",
        reverse("disagreements", args=[p]) + "?kind=verification&field=label",
        reverse("annotators", args=[p]),
        reverse("hiring", args=[p]),
        reverse("pipeline_runs", args=[p]),
        reverse("pipeline_run", args=[p, run.pk]),
        reverse("report", args=[p]) + "?bootstrap=5",
        reverse("settings_tokens"),
        reverse("project_new"),
    ]


def walk_hired_worker(
    page, demo: Project, invite: Invite, training: Item, problems: list[str]
) -> None:  # type: ignore[no-untyped-def]
    width = page.viewport_size["width"]
    worker_id = f"walk-{width}"
    check(page, f"/join/{invite.key}/?PROLIFIC_PID={worker_id}", problems, axe=True)
    page.click("button[type=submit]")  # Start
    page.wait_for_selector("#personal-url")
    look(page, f"joined at {width}px", problems, axe=True)
    hire = Hire.objects.get(worker_id=worker_id)
    check(page, reverse("instructions", args=[demo.pk]), problems, axe=True)
    hire.membership.acknowledge()
    first = Assignment.objects.get(annotator=hire.membership.user, item=training)
    check(page, reverse("assignment", args=[first.pk]), problems, axe=True)
    first.submit({("item", "label"): "contradicted"}, guideline_version=demo.instructions_version)
    hiring.after_submit(hire.membership)
    check(page, reverse("training_feedback", args=[first.pk]), problems, axe=True)
    check(page, reverse("queue", args=[demo.pk]), problems, axe=True)
    rest = Assignment.objects.filter(annotator=hire.membership.user).exclude(pk=first.pk)
    for a in rest[:1]:
        check(page, reverse("assignment", args=[a.pk]), problems, axe=True)


def test_annotator_researcher_and_hired_worker_pages_have_no_axe_violation(
    page, demo: Project
) -> None:  # type: ignore[no-untyped-def]
    disagree(demo)
    training = demo.items.filter(kind=Item.VERIFICATION, assignments__isnull=False).first()
    assert training is not None
    hiring.mark(training, hiring.TRAINING, {"item.label": "supported"}, "Result 1 states it.")
    invite = Invite.objects.create(project=demo, items_per_person=3, completion_code="WALK-1")
    job = ImportJob.objects.create(
        project=demo,
        file_name="biographies.jsonl",
        path="/nowhere/biographies.jsonl",
        status=ImportJob.FAILED,
        errors=[{"line": 3, "field": "response", "message": "expected a string, got null"}],
    )
    annotator = User.objects.get(username=ANNOTATORS[0][0])
    problems: list[str] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.context.clear_cookies()
        login(page, *ANNOTATORS[0])
        for url in annotator_pages(demo, annotator):
            check(page, url, problems, axe=True)
        page.context.clear_cookies()
        walk_hired_worker(page, demo, invite, training, problems)
        page.context.clear_cookies()
        login(page, *RESEARCHER)
        report_in_progress(page, demo, problems)
        for url in researcher_pages(demo, job):
            check(page, url, problems, axe=True)
    assert problems == [], "\n".join(problems)


def report_in_progress(page, demo: Project, problems: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The report page while its report is computed (not in the cache): the request for
    its body is held until axe has looked at the progress note, then let through."""
    cache.clear()
    held: list[object] = []
    released = False

    def hold(route) -> None:  # type: ignore[no-untyped-def]
        if route.request.headers.get("hx-request") and not released:
            held.append(route)
        else:
            route.continue_()

    def body(url: str) -> bool:
        return "/report/" in url

    page.route(body, hold)
    url = reverse("report", args=[demo.pk])
    page.goto(url)
    page.wait_for_selector("#report-progress")
    look(page, f"{url} (computing)", problems, axe=True)
    released = True
    for route in held:
        route.continue_()  # type: ignore[attr-defined]
    page.wait_for_selector("#report-progress", state="detached")
    page.unroute(body, hold)
