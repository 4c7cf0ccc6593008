"""The crowd markets an invite link can name, and the documented form of the ids each
passes in the study URL (issue 38, H1). Plain data: no Django.

- Prolific appends `PROLIFIC_PID`, `STUDY_ID` and `SESSION_ID` when the study URL asks
  for them; each is a 24-character lowercase hexadecimal id (a MongoDB ObjectId).
- Amazon Mechanical Turk passes `workerId`, `assignmentId` and `hitId`; the MTurk API
  reference gives a worker id the pattern `^A[A-Z0-9]+$` (1-64 characters) and assignment
  and HIT ids `^[A-Z0-9]+$` (1-64).
- CloudResearch runs MTurk studies (MTurk ids) and anonymises worker ids as "TP_" plus
  letters and digits when the researcher asks; its Connect ids are not documented as a
  pattern, so they are held to the generic form.
- "other": the generic form (1-128 letters, digits or _ . : -, starting with a letter or
  digit), the platform's rule before markets had names.

An id compares case-insensitively everywhere (`same_id`): an upper-case copy of an id is
the same worker."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A worker id (and an extra parameter) as given, never trimmed: two ids never become one.
# It starts with a letter or digit: the bonus file writes ids raw (the marketplace reads
# them as given), so none may start a spreadsheet formula ("-", "=", "+", "@").
GENERIC = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
GENERIC_RULE = "1 to 128 letters, digits or the characters _ . : -, starting with a letter or digit"

PROLIFIC, MTURK, CLOUDRESEARCH, OTHER = "prolific", "mturk", "cloudresearch", "other"

_HEX24 = (re.compile(r"[0-9a-f]{24}"), "24 lowercase hexadecimal characters")
_MTURK_WORKER = (re.compile(r"A[A-Z0-9]{1,63}"), "an A followed by up to 63 capitals or digits")
_MTURK_ID = (re.compile(r"[A-Z0-9]{1,64}"), "1 to 64 capitals or digits")
_CLOUDRESEARCH_WORKER = (
    re.compile(r"A[A-Z0-9]{1,63}|TP_[A-Z0-9]{1,60}"),
    "an MTurk worker id (A followed by capitals or digits) or an anonymised TP_ id",
)


@dataclass(frozen=True)
class Market:
    name: str
    label: str
    worker_param: str  # the URL parameter the market fills with the worker id
    study_param: str = ""  # the study's own id (checked against Invite.study_id)
    session_param: str = ""  # one per attempt: two people never share one
    # parameter name -> (pattern, rule in words); the worker id's form under "" (any name)
    forms: dict[str, tuple[re.Pattern[str], str]] = field(default_factory=dict)

    def rule(self, param: str, is_worker: bool) -> tuple[re.Pattern[str], str]:
        """The pattern a value of `param` must match, and the rule in words."""
        if param in self.forms:
            return self.forms[param]
        if is_worker and "" in self.forms:
            return self.forms[""]
        return GENERIC, GENERIC_RULE


MARKETS: dict[str, Market] = {
    PROLIFIC: Market(
        PROLIFIC,
        "Prolific",
        "PROLIFIC_PID",
        "STUDY_ID",
        "SESSION_ID",
        {"": _HEX24, "PROLIFIC_PID": _HEX24, "STUDY_ID": _HEX24, "SESSION_ID": _HEX24},
    ),
    MTURK: Market(
        MTURK,
        "Amazon Mechanical Turk",
        "workerId",
        "hitId",
        "assignmentId",
        {"": _MTURK_WORKER, "assignmentId": _MTURK_ID, "hitId": _MTURK_ID},
    ),
    CLOUDRESEARCH: Market(
        CLOUDRESEARCH,
        "CloudResearch",
        "workerId",
        "hitId",
        "assignmentId",
        {"": _CLOUDRESEARCH_WORKER, "assignmentId": _MTURK_ID, "hitId": _MTURK_ID},
    ),
    OTHER: Market(OTHER, "Other", "PROLIFIC_PID"),
}

CHOICES = [(m.name, m.label) for m in MARKETS.values()]


def same_id(worker_id: str) -> str:
    """The form two ids are compared in: an upper-case copy of an id is the same id."""
    return worker_id.casefold()
