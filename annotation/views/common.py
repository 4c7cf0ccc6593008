"""User-scoped lookups: each returns the object or 404s, so views never leak existence."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django_htmx.middleware import HtmxDetails

from ..hiring import TRAINING, HiringPolicy, QualityItem, hire_of
from ..models import Assignment, Membership, Project

TRAINING_ITEM = Exists(QualityItem.objects.filter(item_id=OuterRef("item_id"), role=TRAINING))


class HtmxRequest(HttpRequest):
    htmx: HtmxDetails
    user: User


def membership_for(request: HtmxRequest, project_id: int, role: str) -> Membership:
    """The user's membership with the given role in the project, or 404."""
    memberships = Membership.objects.filter(
        project_id=project_id, user=request.user, role=role, project__deleted_at=None
    )
    if role == Membership.ANNOTATOR:  # an archived project is closed to its annotators
        memberships = memberships.filter(project__archived_at=None)
    # The hire (hiring.hire_of), its invite and the hiring policy with it: every annotator
    # page's hiring rules read them.
    membership = memberships.select_related("project__hiring_policy", "hire__invite").first()
    if membership is None:
        raise Http404("No such project.")
    HiringPolicy.keep_for_request(membership.project)
    if hire_of(membership) is not None:  # the page header's name (hire_tags.hired_as)
        request.user.hired_pseudonym = membership.pseudonym  # type: ignore[attr-defined]
    return membership


def project_for_researcher(request: HtmxRequest, project_id: int) -> Project:
    return get_object_or_404(Project.objects.for_researcher(request.user), pk=project_id)


def assignment_for_annotator(request: HtmxRequest, assignment_id: int) -> Assignment:
    # Only the annotator it belongs to, and only while they are still a member.
    return get_object_or_404(
        # What the kind's view shows comes with it (the claim lists, the claim), and
        # whether it is a training item (hiring.is_training: the hiring rules ask).
        Assignment.objects.visible_to(request.user)
        .select_related(
            "item__project", "item__document", "item__list_a", "item__list_b", "item__claim"
        )
        .annotate(training_item=TRAINING_ITEM),
        pk=assignment_id,
    )
