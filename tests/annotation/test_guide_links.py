"""The researcher pages link to their guide in the manual (docs/), and every guide a
template names is a page of the manual."""

from __future__ import annotations

import re
from pathlib import Path

from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Project
from annotation.templatetags.guide import source
from tests.conftest import login

REPO = Path(__file__).resolve().parents[2]


def test_every_guide_a_template_names_is_a_page_of_the_manual() -> None:
    named = {
        page
        for path in (REPO / "templates").rglob("*.html")
        for page in re.findall(r'{% guide "([^"]+)"', path.read_text())
    }
    assert len(named) >= 5
    assert [p for p in named if not (REPO / source(p)).is_file()] == []


def test_the_pages_name_the_guide_or_link_to_the_published_manual(  # type: ignore[no-untyped-def]
    client, settings, alpha: Project, users: dict[str, User]
) -> None:
    login(client, users["alice"])
    settings.DOCS_URL = ""
    page = client.get(reverse("hiring", args=[alpha.pk])).content.decode()
    assert "Guide: Hiring annotators (<code>docs/researchers/hiring.md</code>" in page
    settings.DOCS_URL = "https://lab.example.org/manual"
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert '<a href="https://lab.example.org/manual/researchers/">Researchers</a>' in page
    page = client.get(reverse("project_import", args=[alpha.pk])).content.decode()
    assert 'href="https://lab.example.org/manual/researchers/importing/"' in page
    # an annotator's pages carry no researcher guide
    login(client, users["bob"])
    assert "Guide:" not in client.get(reverse("queue", args=[alpha.pk])).content.decode()
