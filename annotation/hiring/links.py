"""The study URL a researcher pastes into a crowd market: the invite's join link with
the market's placeholders for the ids the join reads (`Invite.params`).

Prolific fills `{{%PROLIFIC_PID%}}`, `{{%STUDY_ID%}}` and `{{%SESSION_ID%}}` wherever
they appear in a study URL; the join page reads the invite's worker parameter (Prolific's
PROLIFIC_PID unless the invite names another), STUDY_ID and SESSION_ID. Amazon
Mechanical Turk (and CloudResearch, which runs MTurk studies) append workerId,
assignmentId and hitId to an external URL themselves: their URL is the join link as is."""

from __future__ import annotations

from urllib.parse import urlsplit

from .markets import CLOUDRESEARCH, MTURK, PROLIFIC
from .models import Invite

# the ids Prolific fills in a study URL, by their placeholders
PROLIFIC_IDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def placeholder(name: str) -> str:
    """Prolific's placeholder for one of its ids, e.g. {{%STUDY_ID%}}."""
    return "{{%" + name + "%}}"


def study_url(invite: Invite, join_url: str) -> str:
    """The URL to paste into the market's study: `join_url` (the invite's absolute join
    link) with a placeholder per id the market fills and the join reads. The worker
    parameter takes Prolific's PROLIFIC_PID whatever its name; a parameter Prolific does
    not fill (another extra parameter) is left out: the join does not require it. An
    MTurk or CloudResearch link is `join_url` itself (the market appends its ids)."""
    if invite.market in (MTURK, CLOUDRESEARCH):
        return join_url
    pairs = []
    for name in invite.params():
        if name == invite.worker_param:
            pairs.append((name, "PROLIFIC_PID"))
        elif name in PROLIFIC_IDS:
            pairs.append((name, name))
    if invite.market == PROLIFIC or invite.worker_param == "PROLIFIC_PID":
        query = "&".join(f"{name}={placeholder(filled)}" for name, filled in pairs)
    else:  # another market's parameter: the researcher's market fills it its own way
        query = "&".join(f"{name}=" for name in invite.params())
    if not query:
        return join_url
    return join_url + ("&" if urlsplit(join_url).query else "?") + query
