"""The study URL a researcher pastes into a crowd market: the invite's join link with
the market's placeholders for the ids the join reads (`Invite.params`).

Prolific fills `{{%PROLIFIC_PID%}}`, `{{%STUDY_ID%}}` and `{{%SESSION_ID%}}` wherever
they appear in a study URL; the join page reads the invite's worker parameter (Prolific's
PROLIFIC_PID unless the invite names another), STUDY_ID and SESSION_ID. Amazon
Mechanical Turk (and CloudResearch, which runs MTurk studies) append workerId,
assignmentId and hitId to an external URL themselves: their URL is the join link as is."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

from ..models import Assignment
from .markets import CLOUDRESEARCH, MTURK, PROLIFIC
from .models import CHECK, TRAINING, HiringPolicy, Invite, QualityItem

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


# the submitted items a time estimate needs at least (fewer: "not yet measured")
PILOT_ITEMS = 5


@dataclass(frozen=True)
class StudyTerms:
    """What a study asks and pays, as the join page states it (Prolific asks a study to
    say both): the items a person gets, the median active seconds per item over the
    `measured` items submitted so far (None before a pilot: fewer than PILOT_ITEMS), and
    the policy's bonus rates."""

    items: int  # training + real items + known-answer checks one person gets
    real_items: int
    checks: int
    seconds_per_item: float | None
    measured: int
    pay_per_item: Decimal
    pay_per_correct_check: Decimal

    @property
    def minutes(self) -> int | None:
        """The estimate: median seconds per item x items, in whole minutes (at least 1)."""
        if self.seconds_per_item is None:
            return None
        return max(1, round(self.seconds_per_item * self.items / 60))

    @property
    def most_bonus(self) -> Decimal:
        """The bonus for every real item and every check right."""
        total = self.pay_per_item * self.real_items + self.pay_per_correct_check * self.checks
        return total.quantize(Decimal("0.01"))


def study_terms(invite: Invite) -> StudyTerms:
    """The join page's time and pay for `invite`: its quota as hiring.fill_queue gives it
    (the training drawn per person, the real items, the checks at the policy's rate) and
    the median active time of the project's submitted items (two queries: count, then
    the middle row; the database sorts)."""
    project = invite.project
    policy = HiringPolicy.of(project)
    marked = QualityItem.objects.filter(item__project=project)
    n_training = marked.filter(role=TRAINING).count()
    if policy.training_per_person:
        n_training = min(n_training, policy.training_per_person)
    real = invite.items_per_person
    n_checks = marked.filter(role=CHECK).count()
    if policy.check_rate < 1:
        n_checks = min(n_checks, round(policy.check_rate * real / (1 - policy.check_rate)))
    times = Assignment.objects.filter(
        item__project=project, status=Assignment.SUBMITTED, active_seconds__gt=0
    ).order_by("active_seconds")
    measured = times.count()
    median = None
    if measured >= PILOT_ITEMS:
        middle = list(times.values_list("active_seconds", flat=True)[(measured - 1) // 2 :][:2])
        median = middle[0] if measured % 2 else sum(middle) / 2
    return StudyTerms(
        items=n_training + real + n_checks,
        real_items=real,
        checks=n_checks,
        seconds_per_item=median,
        measured=measured,
        pay_per_item=policy.pay_per_item,
        pay_per_correct_check=policy.pay_per_correct_check,
    )
