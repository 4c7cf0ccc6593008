"""The study URL Prolific sends participants to: the invite link with Prolific's
placeholders, which Prolific fills per participant (its API reference, `external_study_url`:
"Participant id {{%PROLIFIC_PID%}}, Study id {{%STUDY_ID%}}, Session id {{%SESSION_ID%}}").
The hiring page shows it ready to paste (the manual path); the API path sends it."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from ..hiring.markets import MARKETS, PROLIFIC
from ..hiring.models import Invite

PLACEHOLDER = "{{%%%s%%}}"  # Prolific's {{%NAME%}}


def study_url(invite: Invite, request: Any) -> str:
    """The invite's absolute join URL with `PROLIFIC_PID={{%PROLIFIC_PID%}}`,
    `STUDY_ID={{%STUDY_ID%}}` and `SESSION_ID={{%SESSION_ID%}}` (the invite's own
    worker parameter when it names another)."""
    m = MARKETS[PROLIFIC]
    names = [
        (invite.worker_param or m.worker_param, m.worker_param),
        (m.study_param, m.study_param),
        (m.session_param, m.session_param),
    ]
    query = "&".join(f"{param}={PLACEHOLDER % value}" for param, value in names)
    base: str = request.build_absolute_uri(reverse("join", kwargs={"key": invite.key}))
    return f"{base}?{query}"
