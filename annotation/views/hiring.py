"""Hiring pages: joining through an invite link, the personal URL, training feedback,
the completion page; the researcher's hiring page (policy, invites, quality table)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from .. import hiring, kinds
from ..errors import posted_id
from ..hiring import Hire, HiringPolicy, Invite, QualityItem
from ..hiring.forms import InviteForm, MarkManyForm, PolicyForm
from ..login_throttle import client_address, join_wait
from ..models import Assignment, Item, Membership, Project
from ..prolific import workspaces as prolific_workspaces
from ..prolific.urls import study_url
from .common import HtmxRequest, assignment_for_annotator, project_for_researcher

HIRING_PAGE_ROWS = 200  # rows of the annotators' and payments tables per page

SESSION_SECONDS = 90 * 24 * 3600  # hired annotators stay logged in for 90 days
BROWSER_COOKIE = "hiring_browser"  # a random mark of the browser that joined (Hire.browser)


def _log_in(request: HtmxRequest, hire: Hire) -> None:
    login(request, hire.membership.user, backend=settings.AUTHENTICATION_BACKENDS[0])
    request.session.set_expiry(SESSION_SECONDS)
    # the page header's name (hire_tags.hired_as), as views.common.membership_for says it
    request.user.hired_pseudonym = hire.membership.pseudonym  # type: ignore[attr-defined]


def join(request: HtmxRequest, key: str) -> HttpResponse:
    """An invite link: GET shows a Start button (so link previews create nobody), POST
    makes the account, logs this browser in and shows the personal URL once. A worker id
    with an account already is told how to come back, never let in by the id."""
    # the project and its hiring policy with it: the join's rules read them
    invite = get_object_or_404(
        Invite.objects.select_related("project__hiring_policy"),
        key=key,
        project__deleted_at=None,
    )
    HiringPolicy.keep_for_request(invite.project)
    params = request.POST if request.method == "POST" else request.GET
    carried = {p: params[p] for p in invite.params() if p in params}
    if (mine := hiring.joined_here(request.user, invite, carried)) is not None:
        return redirect("next_item", project_id=mine.membership.project_id)
    try:
        if request.method != "POST":
            if problem := invite.problem():
                raise hiring.JoinRefused(problem)
            hiring.join_params(invite, carried)
            return render(
                request,
                "annotation/join.html",
                {"invite": invite, "carried": carried, "terms": hiring.study_terms(invite)},
            )
        if wait := join_wait(request, invite.key):
            response = render(
                request,
                "annotation/join.html",
                {"invite": invite, "problem": "Too many people are joining: try again soon."},
                status=429,
            )
            response["Retry-After"] = str(wait)
            return response
        browser = request.COOKIES.get(BROWSER_COOKIE, "")
        if not hiring.BROWSER.fullmatch(browser):
            browser = hiring.new_key()[:32]
        hire = hiring.join(invite, carried, browser=browser, address=client_address(request))
    except hiring.JoinRefused as e:
        return render(
            request,
            "annotation/join.html",
            {"invite": invite, "problem": str(e)},
            status=e.status,
        )
    _log_in(request, hire)
    personal = request.build_absolute_uri(reverse("hire_login", kwargs={"key": hire.key}))
    response = render(
        request, "annotation/joined.html", {"project": invite.project, "personal_url": personal}
    )
    # the same browser joining again under another id is linked to the first account
    response.set_cookie(
        BROWSER_COOKIE, hire.browser, max_age=SESSION_SECONDS, httponly=True, samesite="Lax"
    )
    return response


def personal_login(request: HtmxRequest, key: str) -> HttpResponse:
    """The personal URL: GET asks to confirm (a link preview or a prefetch logs nobody
    in), POST logs this browser in."""
    hire = get_object_or_404(Hire.objects.select_related("membership__user"), key=key)
    if request.method != "POST":
        return render(
            request, "annotation/personal_login.html", {"project": hire.membership.project}
        )
    _log_in(request, hire)
    return redirect("next_item", project_id=hire.membership.project_id)


def gate(request: HtmxRequest, membership: Membership) -> HttpResponse | None:
    """Where next_item sends a hired annotator instead of the real queue, if anywhere:
    a training item, or the page saying why not (returned, paused, training; screened
    out with the invite's code)."""
    hire = hiring.hire_of(membership)
    if hire is None:
        return None
    training = hiring.next_training(membership)
    why = hiring.blocked(membership)
    if training is not None and why in (None, "training"):
        return redirect("assignment", assignment_id=training.pk)
    if why is None:
        return None
    invite = hire.invite
    return render(
        request,
        "annotation/hiring_wait.html",
        {
            "project": membership.project,
            "why": why,
            "screened_out": hiring.screened_out(hire) and why != "returned",
            "code": invite.screened_out_code if invite else "",
            "url": invite.screened_out_url if invite else "",
        },
    )


def after_answer(assignment: Assignment) -> str | None:
    """The page after an answer (its hiring rules ran in operations.answer): a training
    item's feedback, else None (the next item)."""
    if hiring.is_training(assignment):
        return reverse("training_feedback", kwargs={"assignment_id": assignment.pk})
    return None


def _new_version(project: Project) -> str:
    """What marking an example did to the instructions (they show the examples)."""
    version = Project.objects.values_list("instructions_version", flat=True).get(pk=project.pk)
    if version == project.instructions_version:
        return ""
    return f" Instructions are now version {version}: annotators acknowledge them again."


def finished(request: HtmxRequest, membership: Membership) -> HttpResponse | None:
    """A hired annotator whose queue is done: the invite's completion code or URL when
    the quota is complete (hiring.completed), else what is missing."""
    hire = hiring.hire_of(membership)
    if hire is None or hire.invite is None:
        return None
    invite = hire.invite
    if not hiring.record_completion(hire):
        mine = Assignment.objects.in_project(membership.project).for_annotator(membership.user)
        if not mine.done().exists():  # nothing was given to them yet
            return None
        return render(
            request,
            "annotation/hiring_done.html",
            {"project": membership.project, "skips_allowed": invite.skips_allowed, "short": True},
        )
    if invite.completion_url:
        return redirect(invite.completion_url)
    return render(
        request,
        "annotation/hiring_done.html",
        {"project": membership.project, "code": invite.completion_code},
    )


@login_required
def training_feedback(request: HtmxRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_annotator(request, assignment_id)
    quality = QualityItem.objects.filter(item=assignment.item, role=hiring.TRAINING).first()
    if quality is None or assignment.status != Assignment.SUBMITTED:
        raise Http404("No feedback for this item.")
    spec = kinds.get(assignment.item.kind)
    rows = [
        {
            **r,
            "part": kinds.unit_label(r["unit"]),
            "yours": _choice_label(spec, r["key"], r["yours"]),
            "reference": _choice_label(spec, r["key"], r["reference"]),
        }
        for r in hiring.feedback_rows(assignment, quality)
    ]
    return render(
        request,
        "annotation/training_feedback.html",
        {
            "project": assignment.item.project,
            "item": assignment.item,
            "rows": rows,
            "lists": spec.field("choice") is not None,  # kinds that number two lists
            "explanation": hiring.worker_numbering(assignment, quality.explanation),
        },
    )


def _choice_label(spec: kinds.KindSpec, field: str, value: str) -> str:
    """A stored value as the item's page labels it ("Inconclusive (not enough
    information)", not "inconclusive-not-enough")."""
    f = spec.field(field)
    return dict(f.choices).get(value, value) if f else value


# --- researchers ------------------------------------------------------------------------


EXPLANATION_HELP = (
    "shown after a training item, or under the instructions with an example (required"
    " there); write List A / List B for the stored lists: each worker reads them as"
    " List 1 / List 2, numbered as they saw them"
)


class MarkForm(forms.Form):
    item = forms.IntegerField()
    role = forms.ChoiceField(choices=QualityItem.ROLES)
    reference = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="one unit.field=value per line, e.g. item.label=supported;"
        " empty for a check takes the item's adjudications",
    )
    explanation = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=EXPLANATION_HELP
    )
    reference_system = forms.CharField(
        required=False,
        max_length=200,
        help_text="or: the name of an imported reference system whose verdicts are the reference",
    )

    def reference_dict(self) -> dict[str, str]:
        pairs = [
            line.split("=", 1)
            for line in self.cleaned_data["reference"].splitlines()
            if line.strip()
        ]
        if any(len(p) != 2 for p in pairs):
            raise ValueError("write each reference as unit.field=value")
        return {k.strip(): v.strip() for k, v in pairs}


@login_required
def hiring_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    policy = HiringPolicy.of(project)
    policy_form, invite_form, mark_form = PolicyForm(instance=policy), InviteForm(), MarkForm()
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "policy":
            policy_form = PolicyForm(request.POST, instance=policy)
            if policy_form.is_valid():
                policy_form.save()
                messages.success(request, "Quality settings saved.")
                return redirect("hiring", project_id=project.pk)
        elif action == "invite":
            invite_form = InviteForm(
                request.POST, instance=Invite(project=project, created_by=request.user)
            )
            if invite_form.is_valid():
                invite_form.save()
                messages.success(request, "Invite link created.")
                return redirect("hiring", project_id=project.pk)
        elif action == "revoke":
            Invite.objects.filter(project=project, pk=posted_id(request, "invite")).update(
                revoked=True
            )
            messages.success(request, "Invite link revoked.")
            return redirect("hiring", project_id=project.pk)
        elif action == "mark_many":
            many_form = MarkManyForm(project, request.POST)
            if many_form.is_valid():
                n, problems = many_form.save()
                messages.success(request, f"{n} item(s) marked.{_new_version(project)}")
                if problems:
                    messages.error(request, "Not marked: " + "; ".join(problems[:20]) + ".")
            else:
                messages.error(request, "Could not mark: " + many_form.errors.as_text())
            return redirect("hiring", project_id=project.pk)
        elif action == "mark":
            mark_form = MarkForm(request.POST)
            if mark_form.is_valid():
                _mark_one(request, project, mark_form)
                return redirect("hiring", project_id=project.pk)
    invites = [
        (i, study_url(i, request))
        for i in project.invites.annotate(n_hires=Count("hires")).order_by("-created_at")
    ]
    # the tables in pages of HIRING_PAGE_ROWS (one page number for both)
    quality = Paginator(hiring.quality_rows(project), HIRING_PAGE_ROWS)
    payments = Paginator(hiring.payments(project), HIRING_PAGE_ROWS)
    longer = quality if quality.num_pages >= payments.num_pages else payments
    page = longer.get_page(request.GET.get("page"))
    return render(
        request,
        "annotation/hiring.html",
        {
            "project": project,
            "policy_form": policy_form,
            "invite_form": invite_form,
            "mark_form": mark_form,
            "many_form": MarkManyForm(project),
            "invites": invites,
            "quality": quality.get_page(page.number).object_list,
            "payments": payments.get_page(page.number).object_list,
            "page": page,
            "marked": QualityItem.objects.filter(item__project=project).order_by("item_id"),
            "prolific_workspaces": prolific_workspaces.choices(),  # the Prolific section
            "check_problems": [
                p
                for i in project.invites.filter(revoked=False)
                if (p := hiring.check_pool_problem(project, i.items_per_person))
            ][:1],
        },
    )


def _mark_one(request: HtmxRequest, project: Project, mark_form: MarkForm) -> None:
    """Mark one item as a training, check or example item (the hiring page's form), with
    a message saying what happened."""
    data = mark_form.cleaned_data
    item = Item.objects.filter(project=project, pk=data["item"]).first()
    try:
        if item is None:
            raise ValueError(f"no item {data['item']} in this project")
        name = data["reference_system"].strip()
        system = project.systems.filter(name=name).first() if name else None
        if name and system is None:
            raise ValueError(f"no system {name!r} in this project")
        hiring.mark(
            item, data["role"], mark_form.reference_dict(), data["explanation"], system=system
        )
    except ValueError as e:
        messages.error(request, f"Could not mark the item: {e}.")
    else:
        messages.success(request, f"Item {item.pk} marked.{_new_version(project)}")


@login_required
@require_POST
def hiring_member(request: HtmxRequest, project_id: int, membership_id: int) -> HttpResponse:
    """Pause, resume, or let an annotator past training (the quality table's buttons)."""
    project = project_for_researcher(request, project_id)
    membership = get_object_or_404(
        Membership, project=project, pk=membership_id, role=Membership.ANNOTATOR
    )
    action = request.POST.get("action")
    if action not in ("pause", "resume", "let_through", "return", "erase", "pay_anyway"):
        messages.error(request, "Choose pause, resume, let through, return or erase.")
        return redirect("hiring", project_id=project.pk)
    if action in ("return", "erase", "pay_anyway"):
        hire = hiring.hire_of(membership)
        if hire is None or not hire.invited:
            messages.error(request, f"{membership.pseudonym} did not join through an invite.")
        elif action == "pay_anyway":
            Hire.objects.filter(pk=hire.pk).update(pay_cleared=True)
            messages.success(request, f"{membership.pseudonym}: cleared for payment.")
        elif action == "return":
            n = hiring.give_back(hire)
            messages.success(request, f"{membership.pseudonym} returned: {n} open item(s) freed.")
        else:
            hiring.erase(hire)
            messages.success(request, f"{membership.pseudonym}: worker id and parameters deleted.")
        return redirect("hiring", project_id=project.pk)
    hiring.set_state(
        membership,
        paused={"pause": True, "resume": False}.get(action),
        let_through=True if action == "let_through" else None,
    )
    done = {
        "pause": "paused: no new items until resumed",
        "resume": "resumed: gets new items again",
        "let_through": "let past training: real items open",
    }
    messages.success(request, f"{membership.pseudonym} {done[action]}.")
    return redirect("hiring", project_id=project.pk)


@login_required
def hiring_payments(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The payments export: ?layout=csv (every column) or bonus (worker_id,amount)."""
    project = project_for_researcher(request, project_id)
    layout = request.GET.get("layout", "csv")
    if layout not in ("csv", "bonus"):
        raise Http404("Choose layout=csv or layout=bonus.")
    response = HttpResponse(
        hiring.payments_file(project, layout), content_type="text/csv; charset=utf-8"
    )
    name = f"project-{project.pk}-{'bonus' if layout == 'bonus' else 'payments'}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
def hiring_worker_data(request: HtmxRequest, project_id: int, membership_id: int) -> HttpResponse:
    """Everything stored about one hired worker, as JSON (a personal-data request)."""
    project = project_for_researcher(request, project_id)
    hire = get_object_or_404(
        Hire, membership__project=project, membership_id=membership_id, invited=True
    )
    response = JsonResponse(hiring.worker_data(hire), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = (
        f'attachment; filename="worker-{hire.membership.pseudonym}.json"'
    )
    return response
