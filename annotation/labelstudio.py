"""Label Studio round trip: items out as a labelling config and tasks, annotations back
as our answers.

- `label_config(kind)` mirrors our fields (each kind's KindSpec.label_config):
  `from_name` is our field name ("choice", "hard", "justification", "label", "keep");
  fields of a part carry its index: `stance_3` is ("evidence:3", "stance"), `correct_2`
  is ("segment:2", "correct"), `label_4` of an atomic-fact item is ("fact:4", "label").
- `export_items(items)` puts what the kind lets annotators see (KindSpec.view) in each
  task's `data`, our item id and the presentation order in `data.meta`, and never a
  system name.
- `import_annotations(project, export)` reads Label Studio's JSON export
  (tasks with `annotations[].result[]` of from_name/to_name/type/value and
  `completed_by`), maps each Label Studio user to a pseudonymous annotator (an inactive
  account `ls-<id>`) and stores the answers through the pages' answer operation
  (`operations.answer`: the same forms, and the hiring rules after each).
- `push`/`pull` do the same against a running server through label-studio-sdk 2.x.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from . import kinds
from .kinds.base import NO_TEXT, ls_text
from .models import Assignment, Item, Membership, Project
from .operations import Action, Result, answer, answers_data

# --- config and tasks ----------------------------------------------------------------


def label_config(kind: str, *, slots: int = 0, project: Project) -> str:
    """The labelling interface for one kind; `slots` = how many numbered parts."""
    return (
        "<View>"
        + ls_text("question", "Question")
        + ls_text("response", "Response")
        + kinds.labelstudio(kind).label_config(slots, project)
        + "</View>"
    )


def task_data(item: Item, *, swapped: bool = False, slots: int = 0) -> dict[str, Any]:
    """Blinded task data: what the kind lets an annotator see, never a system name or
    verdict; our item id and the presentation order in data.meta."""
    spec = kinds.labelstudio(item.kind)
    doc = item.document
    data: dict[str, Any] = {"question": doc.question or NO_TEXT, "response": doc.response}
    data.update(spec.ls_task(spec.view(item, swapped=swapped), slots))
    # "swapped" = the second stored list is shown first (comparisons; LS shows one order)
    meta = {"item": item.pk, "kind": item.kind, "project": item.project_id}
    if spec.ordered:
        meta.update(swapped=swapped, order=["b", "a"] if swapped else ["a", "b"])
    data["meta"] = {**meta, **data.get("meta", {})}
    return data


@dataclass
class Export:
    kind: str
    config: str
    tasks: list[dict[str, Any]]


def export_items(items: Iterable[Item], *, seed: int = 0) -> Export:
    """One Label Studio project's config and tasks for items of one kind. The order of
    the two lists of a comparison is drawn per item from `seed` (LS shows one order to
    everyone), and kept in data.meta."""
    items = list(items)
    kinds_seen = {i.kind for i in items}
    if len(kinds_seen) != 1:
        raise ValueError("export items of exactly one kind per Label Studio project")
    kind = kinds_seen.pop()
    spec = kinds.labelstudio(kind)
    slots = spec.ls_slots(items)
    rng = random.Random(f"labelstudio-{seed}")
    tasks = [
        {"data": task_data(i, swapped=spec.ordered and rng.random() < 0.5, slots=slots)}
        for i in items
    ]
    return Export(kind, label_config(kind, slots=slots, project=items[0].project), tasks)


# --- annotations back ---------------------------------------------------------------


def result_answers(results: Iterable[dict[str, Any]], *, kind: str) -> list[dict[str, str]]:
    """Label Studio `result[]` -> our long-format answers [{unit, field, value}]."""
    spec = kinds.labelstudio(kind)
    answers = []
    for r in results:
        name, value = r.get("from_name", ""), r.get("value") or {}
        if r.get("type") == "choices" or "choices" in value:
            text = ",".join(value.get("choices") or [])
        elif r.get("type") == "textarea" or "text" in value:
            raw = value.get("text") or []
            text = "\n".join(raw) if isinstance(raw, list) else str(raw)
        else:
            continue
        if name:
            unit, fld = spec.from_ls_name(name)
            answers.append({"unit": unit, "field": fld, "value": text})
    return answers


def answers_result(answers: dict[tuple[str, str], str], *, kind: str) -> list[dict[str, Any]]:
    """Our answers -> a Label Studio `result[]` (used to pre-annotate and in tests)."""
    return kinds.labelstudio(kind).ls_result(answers)


def ls_user_id(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        return str(completed_by.get("id") or completed_by.get("email") or "unknown")
    return str(completed_by)


def annotator_for(project: Project, completed_by: Any) -> Membership:
    """The membership of the pseudonymous annotator standing for one Label Studio user:
    an inactive account `ls-<id>` (it cannot log in), a member of the project."""
    user, created = User.objects.get_or_create(
        username=f"ls-{ls_user_id(completed_by)}", defaults={"is_active": False}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None or membership.role != Membership.ANNOTATOR:
        membership = project.add_member(user, Membership.ANNOTATOR)
    membership.project = project
    return membership


@dataclass
class PullSummary:
    submitted: int = 0
    drafts: int = 0
    skipped: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{self.submitted} submitted, {self.drafts} kept as drafts (invalid), "
            f"{self.skipped} skipped, {self.unchanged} unchanged"
        )
        return text + "".join(f"\n  {e}" for e in self.errors)


def import_annotations(project: Project, export: list[dict[str, Any]]) -> PullSummary:
    """Store Label Studio's exported annotations as our answers, through the pages' one
    answer operation (the same forms, and the hiring rules after each): an invalid
    annotation is kept as a draft and reported, a refused one reported."""
    summary = PullSummary()
    with transaction.atomic():
        for task in export:
            meta = (task.get("data") or {}).get("meta") or {}
            item = Item.objects.filter(project=project, pk=meta.get("item")).first()
            if item is None:
                summary.errors.append(
                    f"task {task.get('id')}: no item {meta.get('item')!r} in {project}"
                )
                continue
            item.project = project
            for ann in task.get("annotations") or []:
                membership = annotator_for(project, ann.get("completed_by"))
                user = membership.user
                position = Assignment.objects.filter(annotator=user).count()
                assignment, created = Assignment.objects.get_or_create(
                    item=item,
                    annotator=user,
                    defaults={"swapped": bool(meta.get("swapped")), "position": position},
                )
                assignment.item = item
                where = f"task {task.get('id')}, {user.username}"
                if ann.get("was_cancelled"):
                    outcome = answer(
                        assignment, membership, {"reason": "skipped in Label Studio"}, Action.SKIP
                    )
                    summary.skipped += outcome.result == Result.SKIPPED
                else:
                    data = answers_data(result_answers(ann.get("result") or [], kind=item.kind))
                    outcome = answer(assignment, membership, data)
                    if outcome.result == Result.CONFLICT:  # an edit made in Label Studio
                        outcome = answer(assignment, membership, data, Action.RESUBMIT)
                    if outcome.result == Result.INVALID:
                        assert outcome.form is not None
                        problems = "; ".join(
                            f"{k}: {' '.join(map(str, v))}" for k, v in outcome.form.errors.items()
                        )
                        summary.errors.append(f"{where}: {problems}")
                        outcome = answer(assignment, membership, data, Action.DRAFT)
                        summary.drafts += outcome.result == Result.SAVED
                    summary.submitted += outcome.result == Result.SUBMITTED
                    summary.unchanged += outcome.result == Result.UNCHANGED
                if outcome.result == Result.REFUSED:
                    summary.errors.append(f"{where}: not stored ({outcome.reason})")
                    if created:  # no queue entry for an answer that was refused
                        assignment.delete()
                elif outcome.result == Result.CONFLICT:
                    summary.errors.append(f"{where}: already submitted, kept as it was")
    return summary


# --- a running server (label-studio-sdk 2.x) -----------------------------------------


def client(url: str, token: str) -> Any:
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=url, api_key=token)  # type: ignore[no-untyped-call]


def push(export: Export, *, url: str, token: str, title: str) -> int:
    """Create a Label Studio project with the config and tasks; returns its id."""
    ls = client(url, token)
    created = ls.projects.create(title=title[:50], label_config=export.config)
    ls.projects.import_tasks(id=created.id, request=export.tasks)
    return int(created.id)


def fetch(ls_project: int, *, url: str, token: str) -> list[dict[str, Any]]:
    """The project's JSON export (tasks with annotations), as Label Studio writes it."""
    import json

    ls = client(url, token)
    raw = b"".join(
        ls.projects.exports.download_sync(ls_project, export_type="JSON", download_all_tasks=True)
    )
    return json.loads(raw)  # type: ignore[no-any-return]
