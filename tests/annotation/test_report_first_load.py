"""Issue 43: the report's first load after a server start. A browser opening a report that
is not in the cache gets the page at once, with a progress note, and no report is built
inline; the page then asks for its body (htmx), which is built and cached; the next visit
shows the whole report at once. Other clients get the whole page, as before. The demo's
report is computed and cached by `load_demo`, so its first visit reads it."""

from __future__ import annotations

import io

from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import reports
from annotation.management.commands.load_demo import DEMO_PROJECT, RESEARCHER
from annotation.models import Item, Project
from annotation.reports.options import ReportOptionsForm

from .test_report_cache import OPTIONS, built

BROWSER = {"HTTP_SEC_FETCH_MODE": "navigate"}  # what a browser sends opening a page
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_a_browser_gets_progress_at_once_and_the_report_fills_in(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    url = reverse("report", args=[alpha.pk])
    client.defaults.update(BROWSER)
    n, first = built(client, url)
    page = first.content.decode()
    assert n == 0  # nothing computed inline
    assert 'id="report-progress"' in page and "<progress" in page and 'role="status"' in page
    assert 'class="report-section' not in page
    assert f'hx-get="{url}?bootstrap=50"' in page and 'hx-trigger="load"' in page
    assert "<h1>" in page and "Filters" in page  # the page itself, not a blank wait
    assert not reports.is_cached(alpha, bootstrap=50)
    client.defaults.pop("HTTP_SEC_FETCH_MODE")
    client.defaults.update(HTMX)
    n, body = built(client, url)  # what the page asks for next
    assert n == 1
    fragment = body.content.decode()
    assert 'class="report-section' in fragment and "<html" not in fragment
    assert reports.is_cached(alpha, bootstrap=50)
    client.defaults.pop("HTTP_HX_REQUEST")
    client.defaults.update(BROWSER)
    n, again = built(client, url)  # cached: the whole report at once
    assert n == 0
    assert 'class="report-section' in again.content.decode()
    assert 'id="report-progress"' not in again.content.decode()


def test_other_clients_get_the_whole_report_in_one_response(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    n, response = built(client, reverse("report", args=[alpha.pk]), OPTIONS)
    assert n == 1
    assert 'class="report-section' in response.content.decode()
    assert 'id="report-progress"' not in response.content.decode()


def test_the_demo_report_is_cached_when_the_demo_loads(db: None) -> None:
    call_command("load_demo", stdout=io.StringIO())
    demo = Project.objects.get(name=DEMO_PROJECT)
    options = ReportOptionsForm(None, project=demo).options()
    assert reports.is_cached(demo, options)
    client = Client(**BROWSER)
    client.force_login(User.objects.get(username=RESEARCHER[0]))
    n, page = built(client, reverse("report", args=[demo.pk]), {})
    assert n == 0 and 'class="report-section' in page.content.decode()
