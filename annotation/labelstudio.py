"""Label Studio round trip: items out as a labelling config and tasks, annotations back
as our answers.

- `label_config(kind)` mirrors our fields: `from_name` is our field name ("choice",
  "hard", "justification", "label", "keep"); per-result and per-segment fields carry the
  unit's index: `stance_3` is ("evidence:3", "stance"), `correct_2` is
  ("segment:2", "correct").
- `tasks(items)` puts texts, lists and evidence in `data`, our item id and the
  presentation order in `data.meta`, and never a system name.
- `import_annotations(project, export)` reads Label Studio's JSON export
  (tasks with `annotations[].result[]` of from_name/to_name/type/value and
  `completed_by`), maps each Label Studio user to a pseudonymous annotator (an inactive
  account `ls-<id>`) and stores the answers through the same forms and Assignment
  methods as the pages.
- `push`/`pull` do the same against a running server through label-studio-sdk 2.x.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import quoteattr

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from .kinds import CLAIM_LABELS, STANCES
from .models import Assignment, Item, Membership, Project

INDEXED = re.compile(r"^(stance|correct|error_type|reason|links)_(\d+)$")
UNIT_OF = {"stance": "evidence", "correct": "segment", "error_type": "segment",
           "reason": "segment", "links": "segment"}
NO_TEXT = "(none)"  # Label Studio wants every $variable of the config in every task


# --- config -------------------------------------------------------------------------


def _choices(name: str, to: str, values: Iterable[str], *, required: bool = True,
             header: str = "") -> str:
    options = "".join(f"<Choice value={quoteattr(v)}/>" for v in values)
    head = f"<Header value={quoteattr(header)}/>" if header else ""
    req = ' required="true"' if required else ""
    return (f'{head}<Choices name="{name}" toName="{to}" choice="single-radio"'
            f' showInline="true"{req}>{options}</Choices>')


def _text(name: str, header: str) -> str:
    return f"<Header value={quoteattr(header)}/><Text name=\"{name}\" value=\"${name}\"/>"


def label_config(kind: str, *, evidence: int = 0, segments: int = 0,
                 error_types: Iterable[str] = ()) -> str:
    """The labelling interface for one kind; `evidence`/`segments` = how many slots."""
    parts = [_text("question", "Question"), _text("response", "Response")]
    if kind == Item.COMPARISON:
        parts += [
            _text("list1", "List 1"), _text("list2", "List 2"),
            _choices("choice", "response", ["1", "2"],
                     header="Which claim list better covers the verifiable content?"),
            _choices("hard", "response", ["yes", "no"], header="Was it hard to decide?"),
            '<Header value="Justification (at least one sentence)"/>'
            '<TextArea name="justification" toName="response" rows="3" maxSubmissions="1"'
            ' required="true"/>',
        ]
    elif kind == Item.VERIFICATION:
        parts.append(_text("claim", "Claim"))
        for r in range(1, evidence + 1):
            parts += [_text(f"evidence_{r}", f"Search result {r}"),
                      _choices(f"stance_{r}", f"evidence_{r}", STANCES, required=False)]
        parts.append(_choices("label", "claim", CLAIM_LABELS,
                              header="Is the claim supported by the search results?"))
    elif kind == Item.SEGMENT:
        for p in range(segments):
            parts += [
                _text(f"segment_{p}", f"Segment {p + 1}"),
                _choices(f"correct_{p}", f"segment_{p}", ["true", "false"], required=False),
                _choices(f"error_type_{p}", f"segment_{p}", list(error_types), required=False,
                         header="Error type (when incorrect)"),
                f'<TextArea name="reason_{p}" toName="segment_{p}" rows="2" maxSubmissions="1"'
                ' placeholder="Reason"/>',
                f'<TextArea name="links_{p}" toName="segment_{p}" rows="2" maxSubmissions="1"'
                ' placeholder="Reference links, one per line"/>',
            ]
        parts.append(_choices("keep", "response", ["keep", "remove"],
                              header="Keep this response?"))
    else:
        raise ValueError(f"unknown item kind {kind!r}")
    return "<View>" + "".join(parts) + "</View>"


# --- tasks --------------------------------------------------------------------------


def _numbered(claims: list[str]) -> str:
    return "\n".join(f"{i}. {c}" for i, c in enumerate(claims, start=1)) or NO_TEXT


def task_data(item: Item, *, swapped: bool = False, evidence: int = 0,
              segments: int = 0) -> dict[str, Any]:
    """Blinded task data: texts only, never a system name or verdict."""
    doc = item.document
    data: dict[str, Any] = {"question": doc.question or NO_TEXT, "response": doc.response}
    meta: dict[str, Any] = {"item": item.pk, "kind": item.kind, "project": item.project_id}
    if item.kind == Item.COMPARISON:
        assert item.list_a is not None and item.list_b is not None
        first, second = (item.list_b, item.list_a) if swapped else (item.list_a, item.list_b)
        claims1 = [c.text for c in first.claims.all()]
        claims2 = [c.text for c in second.claims.all()]
        data.update(list1=_numbered(claims1), list2=_numbered(claims2),
                    list1_claims=claims1, list2_claims=claims2)
        # Our presentation order: "swapped" = the second stored list is shown as List 1.
        meta["swapped"] = swapped
        meta["order"] = ["b", "a"] if swapped else ["a", "b"]
    elif item.kind == Item.VERIFICATION:
        assert item.claim is not None
        data["claim"] = item.claim.text
        results = {e.rank: e for e in item.claim.evidence.all()}
        data["evidence"] = [{"rank": e.rank, "title": e.title, "snippet": e.snippet, "link": e.link}
                            for e in results.values()]
        for r in range(1, evidence + 1):
            e = results.get(r)
            data[f"evidence_{r}"] = f"{e.title}\n{e.snippet}\n{e.link}".strip() if e else NO_TEXT
        meta["ranks"] = sorted(results)
    elif item.kind == Item.SEGMENT:
        segs = {s.position: s.text for s in doc.segments.shown()}
        data["segments"] = [{"position": p, "text": t} for p, t in sorted(segs.items())]
        for p in range(segments):
            data[f"segment_{p}"] = segs.get(p, NO_TEXT)
        meta["positions"] = sorted(segs)
    data["meta"] = meta
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
    kinds = {i.kind for i in items}
    if len(kinds) != 1:
        raise ValueError("export items of exactly one kind per Label Studio project")
    kind = kinds.pop()
    project = items[0].project
    evidence = segments = 0
    if kind == Item.VERIFICATION:
        evidence = max((i.claim.evidence.aggregate(n=Max("rank"))["n"] or 0) for i in items if i.claim)
    if kind == Item.SEGMENT:
        segments = max((i.document.segments.aggregate(n=Max("position"))["n"] or -1) + 1 for i in items)
    rng = random.Random(f"labelstudio-{seed}")
    tasks = [{"data": task_data(i, swapped=kind == Item.COMPARISON and rng.random() < 0.5,
                                evidence=evidence, segments=segments)} for i in items]
    config = label_config(kind, evidence=evidence, segments=segments,
                          error_types=project.error_types)
    return Export(kind, config, tasks)


# --- annotations back ---------------------------------------------------------------


def result_answers(results: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    """Label Studio `result[]` -> our long-format answers [{unit, field, value}]."""
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
        m = INDEXED.match(name)
        if m:
            unit = f"{UNIT_OF[m.group(1)]}:{m.group(2)}"
            answers.append({"unit": unit, "field": m.group(1), "value": text})
        elif name:
            answers.append({"unit": "item", "field": name, "value": text})
    return answers


def answers_result(answers: dict[tuple[str, str], str], *, kind: str) -> list[dict[str, Any]]:
    """Our answers -> a Label Studio `result[]` (used to pre-annotate and in tests)."""
    results = []
    text_fields = {"justification", "reason", "links"}
    for (unit, fld), value in sorted(answers.items()):
        if unit == "item":
            name, to = fld, ("claim" if kind == Item.VERIFICATION and fld == "label" else "response")
        else:
            index = unit.split(":", 1)[1]
            name = f"{fld}_{index}"
            to = f"evidence_{index}" if unit.startswith("evidence") else f"segment_{index}"
        if fld in text_fields:
            results.append({"from_name": name, "to_name": to, "type": "textarea",
                            "value": {"text": [value]}})
        else:
            results.append({"from_name": name, "to_name": to, "type": "choices",
                            "value": {"choices": [value]}})
    return results


def ls_user_id(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        return str(completed_by.get("id") or completed_by.get("email") or "unknown")
    return str(completed_by)


def annotator_for(project: Project, completed_by: Any) -> User:
    """The pseudonymous annotator standing for one Label Studio user: an inactive
    account `ls-<id>` (it cannot log in) and a member of the project."""
    user, created = User.objects.get_or_create(username=f"ls-{ls_user_id(completed_by)}",
                                               defaults={"is_active": False})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    if project.role_of(user) != Membership.ANNOTATOR:
        project.add_member(user, Membership.ANNOTATOR)
    return user


@dataclass
class PullSummary:
    submitted: int = 0
    drafts: int = 0
    skipped: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (f"{self.submitted} submitted, {self.drafts} kept as drafts (invalid), "
                f"{self.skipped} skipped, {self.unchanged} unchanged")
        return text + "".join(f"\n  {e}" for e in self.errors)


def import_annotations(project: Project, export: list[dict[str, Any]]) -> PullSummary:
    """Store Label Studio's exported annotations as our answers (validated by the forms
    of the pages: an invalid annotation is kept as a draft and reported)."""
    from .api.views import answer_form  # the one kind -> form mapping of the API

    summary = PullSummary()
    version = project.instructions_version
    with transaction.atomic():
        for task in export:
            meta = (task.get("data") or {}).get("meta") or {}
            item = Item.objects.filter(project=project, pk=meta.get("item")).first()
            if item is None:
                summary.errors.append(f"task {task.get('id')}: no item {meta.get('item')!r} in {project}")
                continue
            for ann in task.get("annotations") or []:
                user = annotator_for(project, ann.get("completed_by"))
                position = Assignment.objects.filter(annotator=user).count()
                assignment, _ = Assignment.objects.get_or_create(
                    item=item, annotator=user,
                    defaults={"swapped": bool(meta.get("swapped")), "position": position},
                )
                if ann.get("was_cancelled"):
                    if assignment.status != Assignment.SKIPPED and assignment.skip("skipped in Label Studio"):
                        summary.skipped += 1
                    continue
                form = answer_form(assignment, result_answers(ann.get("result") or []))
                if form.is_valid():
                    values = form.answer_values()
                    if assignment.status == Assignment.SUBMITTED and assignment.answers_dict() == values:
                        summary.unchanged += 1
                        continue
                    assignment.resubmit(values, guideline_version=version)
                    summary.submitted += 1
                else:
                    assignment.save_draft(form.draft_values(), guideline_version=version)
                    summary.drafts += 1
                    problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
                    summary.errors.append(f"task {task.get('id')}, {user.username}: {problems}")
    return summary


# --- a running server (label-studio-sdk 2.x) -----------------------------------------


def client(url: str, token: str) -> Any:
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=url, api_key=token)


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
    raw = b"".join(ls.projects.exports.download_sync(ls_project, export_type="JSON",
                                                      download_all_tasks=True))
    return json.loads(raw)
