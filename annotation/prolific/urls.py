"""The study URL Prolific sends participants to: the invite link with Prolific's
placeholders, which Prolific fills per participant (its API reference, `external_study_url`:
"Participant id {{%PROLIFIC_PID%}}, Study id {{%STUDY_ID%}}, Session id {{%SESSION_ID%}}").
The hiring page shows it ready to paste (the manual path); the API path sends it. One
builder for both: `hiring.study_url`."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from .. import hiring
from ..hiring.models import Invite


def study_url(invite: Invite, request: Any) -> str:
    """`hiring.study_url` of the invite's absolute join link."""
    join = request.build_absolute_uri(reverse("join", kwargs={"key": invite.key}))
    return hiring.study_url(invite, join)
