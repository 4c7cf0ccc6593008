"""Answers for a release's tests: every open assignment of a project submitted with
values chosen by a seeded draw among each field's labels (free-text fields get a short
text), as a page would store them."""

from __future__ import annotations

import random
from pathlib import Path

from django.contrib.auth.models import User

from annotation import hiring, kinds
from annotation.kinds.base import ItemInfo
from annotation.models import (
    Assignment,
    Claim,
    ClaimList,
    Document,
    Evidence,
    Item,
    Membership,
    Project,
    System,
    Verdict,
)
from annotation.release.tables import expected_units


def answer_everything(project: Project, *, seed: int = 0, limit: int | None = None) -> int:
    """Submit every unsubmitted assignment of `project` (at most `limit`); returns how many."""
    rng = random.Random(seed)
    expected = expected_units(project, ItemInfo.read(Item.objects.filter(project=project)))
    done = 0
    open_ = Assignment.objects.filter(item__project=project).exclude(status=Assignment.SUBMITTED)
    for a in open_.select_related("item").order_by("pk")[:limit]:
        spec = kinds.get(a.item.kind)
        labels = spec.categorical(project)
        values = {
            (unit, fld): rng.choice(labels[fld]) if fld in labels else "as the results say"
            for unit, fld in expected.get(a.item_id, [])
        }
        a.active_seconds = float(rng.randint(10, 90))
        a.save(update_fields=["active_seconds"])
        a.submit(values, guideline_version=project.instructions_version)
        done += 1
    return done


def release_texts(folder: Path) -> dict[str, str]:
    """Every file of a release as text (Parquet as its bytes decoded leniently)."""
    return {
        str(p.relative_to(folder)): p.read_bytes().decode("utf-8", errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def verification_study(project: Project, annotators: list[User], *, n: int = 6) -> list[Item]:
    """`n` verification items (two search results each, one verifier's verdicts), the
    first a known-answer check and the second a training item, every one assigned to
    every annotator."""
    extractor = System.objects.create(
        project=project, name="extractor-x", origin="import:veriscore"
    )
    verifier = System.objects.create(
        project=project, name="verifier-x", kind=System.VERIFIER, model="gpt-4o-mini"
    )
    items = []
    for i in range(n):
        doc = Document.objects.create(
            project=project,
            external_id=f"release-doc-{i}",
            domain="Biography",
            response=f"Text {i}.",
        )
        claim_list = ClaimList.objects.create(document=doc, system=extractor)
        claim = Claim.objects.create(claim_list=claim_list, position=0, text=f"Claim {i}.")
        for rank in (1, 2):
            Evidence.objects.create(
                claim=claim,
                rank=rank,
                title=f"Result {rank}",
                link=f"https://example.org/{i}/{rank}",
            )
        Verdict.objects.create(claim=claim, system=verifier, label="supported")
        items.append(
            Item.objects.create(project=project, kind=Item.VERIFICATION, document=doc, claim=claim)
        )
    hiring.mark(items[0], hiring.CHECK, {"item.label": "supported"})
    hiring.mark(items[1], hiring.TRAINING, {"item.label": "supported"}, "It says so.")
    for position, item in enumerate(items):
        for user in annotators:
            Assignment.objects.create(item=item, annotator=user, position=position)
    return items


def hired_project() -> tuple[Project, set[str]]:
    """A project with a researcher and two members holding emails, and five hires with
    Prolific-form ids, all of them with answers to verification items."""
    owner = User.objects.create_user("quintessa-owner", email="quintessa.owner@example.org")
    project = Project.create_with_owner(Project(name="Hired study"), owner)
    secrets = {"quintessa-owner", "quintessa.owner@example.org"}
    members = []
    for i in range(2):
        name, email = f"bartholomew{i}", f"bartholomew{i}@example.org"
        user = User.objects.create_user(name, email=email)
        project.add_member(user, Membership.ANNOTATOR)
        secrets |= {name, email}
        members.append(user)
    for i in range(5):
        worker = f"5f{i:02d}a1b2c3d4e5f6a7b8c9d0e{i}"  # 24 hex characters, Prolific's form
        user = User.objects.create_user(f"prolific-{worker}")
        membership = project.add_member(user, Membership.ANNOTATOR)
        hiring.Hire.objects.create(membership=membership, worker_id=worker, passed_training=True)
        secrets |= {worker, user.username}
        members.append(user)
    verification_study(project, members)
    return project, secrets
