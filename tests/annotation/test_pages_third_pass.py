"""Issue 43's smaller defects, each with a test that fails on the main it was filed on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotation import hiring, kinds, reports
from annotation.hiring import QualityItem
from annotation.models import AdaptiveOverlap, Assignment, Item, Membership, PipelineRun, Project
from annotation.reports.planning import PlanOptions, plan_project
from tests.conftest import canonical_line

REPO = Path(__file__).resolve().parents[2]


def test_table_cells_do_not_break_words_in_the_middle(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    """Defect 2: `main { overflow-wrap: anywhere }` let a table cell shrink to one letter
    per line ("Claim s", "Revok e"): a table in a scrolling region keeps its words whole
    (it scrolls in its box, focusable), and the run page's scores are in one."""
    css = (REPO / "static/annotation/site.css").read_text()
    assert re.search(r"^\.scroll table\.whole-words \{ overflow-wrap: normal; \}", css, re.M)
    run = PipelineRun.objects.create(
        project=alpha,
        status=PipelineRun.FINISHED,
        scores={"k": {}, "k_rule": "upper median", "responses": [], "rows": [],
                "correlations": []},
    )  # fmt: skip
    client.force_login(users["alice"])
    page = client.get(reverse("pipeline_run", args=[alpha.pk, run.pk])).content.decode()
    region = '<div class="scroll" tabindex="0" role="region" aria-label="Scores">'
    assert region + '<table class="grid whole-words">' in page


def test_help_text_links_the_manual_not_a_repository_path(
    alpha: Project, users: dict[str, User], client: Client, settings
) -> None:  # type: ignore[no-untyped-def]
    """Defect 10: "See docs/reference-mode.md" (a wrong path too): the manual's page,
    through DOCS_URL, or its right file without it."""
    client.force_login(users["alice"])
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert "docs/reference-mode.md" not in page
    assert "<code>docs/pipeline/reference-mode.md</code>" in page
    settings.DOCS_URL = "https://manual.example/"
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert '<a href="https://manual.example/pipeline/reference-mode/">Reference mode</a>' in page


def test_a_member_who_never_opened_the_instructions_has_not_acknowledged_them(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    """Defect 11: "instructions v0 acknowledged" for members who never opened them."""
    client.force_login(users["alice"])
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert "v0 acknowledged" not in page
    assert page.count("instructions not acknowledged yet") == 2  # bob and carol
    alpha.memberships.get(user=users["bob"]).acknowledge()
    alpha.instructions_version = 2
    alpha.save()
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert "instructions v1 acknowledged, v2 not yet" in page


def test_the_run_page_sums_up_undefined_taus_and_names_a_missing_model(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    """Defect 12: fifteen lines of "Kendall's tau ... undefined" and blank Model cells."""
    domains = ["a", "b", "c", "d", "e", "f"]
    row = {
        "model": "", "domain": "", "responses": 1, "abstained": 0, "incomplete": 0,
        "k": 2.0, "veriscore": 50.0, "precision": 0.5, "recall": 0.5, "mean_claims": 2.0,
        "unverified": 0,
    }  # fmt: skip
    pairs = [(a, b) for i, a in enumerate(domains) for b in domains[i + 1 :]]
    assert len(pairs) == 15
    scores = {
        "k": {d: 2.0 for d in domains},
        "k_rule": "upper median",
        "responses": [],
        "rows": [{**row, "domain": d} for d in domains],
        "correlations": [
            {
                "domain_a": a,
                "domain_b": b,
                "models": 1,
                "tau": None,
                "p_value": None,
                "note": "fewer than 2 models",
            }
            for a, b in pairs
        ],  # fmt: skip
        "incomplete": 0,
        "unparsed": 0,
    }
    run = PipelineRun.objects.create(
        project=alpha, config={"model": "m"}, status=PipelineRun.FINISHED, scores=scores
    )
    client.force_login(users["alice"])
    page = client.get(reverse("pipeline_run", args=[alpha.pk, run.pk])).content.decode()
    assert page.count("undefined") == 1
    assert "undefined for 15 pair(s) (fewer than 2 models)" in page
    assert "<tr><td></td>" not in page and page.count("(unknown model)") == 6
    assert Membership.objects.filter(project=alpha).exists()


def _answers(choice: str) -> dict[tuple[str, str], str]:
    return {
        ("item", "choice"): choice,
        ("item", "hard"): "no",
        ("item", "justification"): "Because it covers more.",
    }


def test_adaptive_overlap_counts_hours_saved_on_finished_items_only(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """Defect 7: with only first answers in, nothing is finished and nothing is saved yet
    (main compared 4 answers with a finished fixed-overlap study: 8 answers "saved")."""
    AdaptiveOverlap.objects.create(
        project=alpha, kind="comparison", field="choice", start=2, up_to=3
    )
    spec = kinds.get("comparison")
    for item in alpha_items:
        first = item.assignments.order_by("pk").first()
        assert first is not None
        choice = next(c for c in "12" if spec.comparable("choice", c, first.swapped) == "a")
        first.active_seconds = 360.0
        first.save()
        first.submit(_answers(choice), guideline_version=1)

    def summary() -> dict:
        report = reports.build_report(alpha, bootstrap=0)
        return report.table("adaptive-overlap").as_dicts()[0]

    assert summary()["annotator-hours saved"] == 0
    assert summary()["items finished"] == 0
    # the second answers agree on item 0: finished with 2 answers, 1 saved (6 minutes)
    second = alpha_items[0].assignments.order_by("pk").last()
    assert second is not None
    choice = next(c for c in "12" if spec.comparable("choice", c, second.swapped) == "a")
    second.active_seconds = 360.0
    second.save()
    second.submit(_answers(choice), guideline_version=1)
    assert summary()["items finished"] == 1
    assert summary()["annotator-hours saved"] == pytest.approx(0.1)


def test_plan_the_study_leaves_out_a_degenerate_pilot(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """Defect 8: four comparisons, bob and carol always split: kappa -1, every unit
    alike, so resampling gives an interval of zero width and main planned a handful of
    units from it. The pilot's own row is left out and the note says why."""
    spec = kinds.get("comparison")
    for item in alpha_items:
        for assignment, side in zip(item.assignments.order_by("pk"), "ab", strict=True):
            choice = next(
                c for c in "12" if spec.comparable("choice", c, assignment.swapped) == side
            )
            assignment.submit(_answers(choice), guideline_version=1)
    section = plan_project(alpha, PlanOptions(studies=20, raters=(2,)))
    assert section is not None
    (table,) = [t for t in section.tables if t.name == "planning-agreement"]
    rows = table.as_dicts()
    choice_rows = [r for r in rows if r["task"] == "comparison" and r["field"] == "choice"]
    assert choice_rows and all(r["source"] != "pilot" for r in choice_rows)
    assert any(
        "comparison.choice (its 4 units all have the same answers: an interval of zero width)" in n
        for n in section.notes
    )


def test_training_feedback_shows_the_claim_and_labels_not_codes(
    verification: list[Item], users: dict[str, User], client: Client
) -> None:
    """Defect 3: stored codes ("inconclusive-not-enough", "Part: item"), a note on
    numbered lists on a verification item, and no claim."""
    item = verification[0]  # bob answered "supported"
    QualityItem.objects.create(
        item=item,
        role=hiring.TRAINING,
        reference={"item.label": "inconclusive-not-enough", "evidence:2.stance": "inconclusive"},
    )
    mine = item.assignments.get(annotator=users["bob"])
    client.force_login(users["bob"])
    page = client.get(reverse("training_feedback", args=[mine.pk])).content.decode()
    assert item.claim is not None
    assert escape(item.claim.text) in page
    assert "Inconclusive (not enough information)" in page and "<td>Supported</td>" in page
    assert "inconclusive-not-enough" not in page and "<td>item</td>" not in page
    assert "<td>Search result 2</td>" in page
    assert "Lists are numbered" not in page


def test_the_import_preview_is_a_readable_table(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    """Defect 5: each record was one unwrapped line in a <pre> (a page 172,185 px wide):
    now each record is a table of its fields, a long value cut, the whole kept below."""
    record = json.loads(canonical_line(9))
    record["response"] = "A long response. " * 200
    client.force_login(users["alice"])
    shown = client.post(
        reverse("project_import", args=[alpha.pk]),
        {
            "file": SimpleUploadedFile("c.jsonl", json.dumps(record).encode()),
            "format": "auto",
            "dry_run": "on",
        },
    ).content.decode()
    assert "Nothing was imported (preview)" in shown
    table = shown.split('<table class="grid preview-record">', 1)[1].split("</table>", 1)[0]
    assert '<th scope="row">response</th>' in table
    assert "(3,400 characters)" in table and table.count("A long response.") < 40
    assert '<pre class="wrap">' in shown  # the JSON Lines, wrapped


def test_landmarks_headings_and_messages_as_axe_wants_them(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    """Defect 4: role="status" on the messages' <ul> orphaned its <li>s; item pages had no
    <h1> and two unnamed <nav>s; the home page's last column header was empty."""
    client.force_login(users["alice"])
    run = PipelineRun.objects.create(project=alpha, config={}, status=PipelineRun.FINISHED)
    url = reverse("pipeline_run", args=[alpha.pk, run.pk])
    page = client.post(url, {"action": "nonsense"}, follow=True).content.decode()
    assert "Unknown action." in page
    assert (
        '<div role="status"><ul class="messages">' in page
        and '<ul class="messages" role' not in page
    )
    home = client.get(reverse("home")).content.decode()
    assert "<th></th>" not in home
    client.force_login(users["bob"])
    mine = alpha_items[0].assignments.get(annotator=users["bob"])
    item = client.get(reverse("assignment", args=[mine.pk])).content.decode()
    assert item.count("<h1") == 1
    navs = re.findall(r"<nav[^>]*>", item)
    assert len(navs) == 2 and all("aria-label=" in n for n in navs)


def test_the_queue_filters_by_kind_for_someone_holding_several(
    alpha: Project,
    alpha_items: list[Item],
    alpha_verification: list[Item],
    users: dict[str, User],
    client: Client,
) -> None:
    """Researchers' wish (issue 43): a queue filter by kind for annotators who hold
    several kinds; the progress stays the whole queue's; an unknown kind shows all."""
    client.force_login(users["bob"])
    url = reverse("queue", args=[alpha.pk])
    everything = client.get(url).content.decode()
    assert 'aria-label="Kinds of item"' in everything
    mine = Assignment.objects.filter(annotator=users["bob"], item__project=alpha)
    only = client.get(url, {"kind": Item.VERIFICATION}).content.decode()
    rows = only.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert rows.count("<tr>") == mine.filter(item__kind=Item.VERIFICATION).count() > 0
    assert 'class="kind">Comparison' not in rows
    shown = client.get(url, {"kind": "<script>"}).content.decode()
    assert shown.split("<tbody>", 1)[1].count("<tr>") == mine.count()
    assert "<script>" not in shown.split("<main>", 1)[1]
