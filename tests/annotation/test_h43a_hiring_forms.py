"""Issue 43, defect 9: the hiring forms show labels and help, not raw field names; the
invite table shows each invite's settings and a ready-to-paste study URL whose
placeholders are the parameters the join page reads, with a keyboard copy button."""

from __future__ import annotations

import re
from html import unescape

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring
from annotation.hiring import Invite
from annotation.models import Project

HEX = "60aa11bb22cc33dd44ee55ff"
WORKER = "5f0a1b2c3d4e5f6a7b8c9d0e"
SESSION = "aa11bb22cc33dd44ee55ff66"


def _page(client: Client, project: Project) -> str:
    return unescape(client.get(reverse("hiring", args=[project.pk])).content.decode())


def test_the_forms_name_their_fields_and_explain_them(
    alpha: Project, users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    page = _page(client, alpha)
    assert "Time limit minutes" not in page and "Extra params" not in page
    assert "Time limit (minutes)" in page
    # no JSON textarea holding []: a text field of names, explained
    assert not re.search(r"<textarea[^>]*extra_params[^>]*>\s*\[\]", page)
    assert re.search(r'<input type="text" name="extra_params"', page)
    assert "separated by commas" in page
    assert "0 = no real items (training and checks only)" in page
    assert "Training items per person" in page and "0 = every training item" in page


def test_parameter_names_typed_with_commas_are_stored_as_a_list(
    alpha: Project, users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    body = {"action": "invite", "extra_params": "GROUP, SOURCE", "items_per_person": 1}
    assert client.post(reverse("hiring", args=[alpha.pk]), body).status_code == 302
    assert Invite.objects.get().extra_params == ["GROUP", "SOURCE"]
    body["extra_params"] = "GROUP; DROP"  # not a parameter name: refused, named
    page = client.post(reverse("hiring", args=[alpha.pk]), body).content.decode()
    assert "separated by commas" in page and Invite.objects.count() == 1


def test_the_invite_table_shows_settings_and_a_prolific_url_that_joins(
    alpha: Project, users: dict[str, User]
) -> None:
    invite = Invite.objects.create(
        project=alpha,
        market="prolific",
        study_id=HEX,
        items_per_person=2,
        time_limit_minutes=45,
        completion_code="C0DE1",
        skips_allowed=1,
    )
    client = Client()
    client.force_login(users["alice"])
    page = _page(client, alpha)
    join = "http://testserver" + reverse("join", args=[invite.key])
    url = (
        f"{join}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}"
    )
    assert url == hiring.study_url(invite, join)
    assert f'value="{url}"' in page
    # a button (Enter and Space press it), naming the field it copies
    assert f'<button type="button" data-copy="invite-url-{invite.pk}">Copy</button>' in page
    assert "annotation/copy.js" in page
    for setting in ("real items per person: 2", "time limit: 45 minutes", "code C0DE1"):
        assert setting in page
    assert "skips allowed: 1" in page and f"study {HEX}" in page
    # what Prolific sends, filled in: the join page reads every parameter
    filled = (
        url.replace("{{%PROLIFIC_PID%}}", WORKER)
        .replace("{{%STUDY_ID%}}", HEX)
        .replace("{{%SESSION_ID%}}", SESSION)
    )
    worker = Client()
    start = worker.get(filled.removeprefix("http://testserver")).content.decode()
    carried = dict(re.findall(r'<input type="hidden" name="([A-Z_]+)" value="([^"]*)"', start))
    r = worker.post(reverse("join", args=[invite.key]), carried)
    assert r.status_code == 200, r.content[:300]
    hire = hiring.Hire.objects.get(invite=invite)
    assert hire.worker_id == WORKER
    assert hire.worker_params == {"STUDY_ID": HEX, "SESSION_ID": SESSION}


def test_a_renamed_worker_parameter_takes_prolifics_id(alpha: Project) -> None:
    invite = Invite.objects.create(project=alpha, worker_param="pid", extra_params=["STUDY_ID"])
    assert hiring.study_url(invite, "https://x/join/k/") == ("https://x/join/k/?pid=&STUDY_ID=")
    invite = Invite.objects.create(project=alpha, market="prolific", worker_param="pid")
    assert hiring.study_url(invite, "https://x/join/k/") == (
        "https://x/join/k/?pid={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
        "&SESSION_ID={{%SESSION_ID%}}"
    )
    invite = Invite.objects.create(project=alpha, market="mturk", worker_param="workerId")
    assert hiring.study_url(invite, "https://x/join/k/") == "https://x/join/k/"
