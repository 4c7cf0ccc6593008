"""Answers for a release's tests: every open assignment of a project submitted with
values chosen by a seeded draw among each field's labels (free-text fields get a short
text), as a page would store them."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from annotation import kinds
from annotation.kinds.base import ItemInfo
from annotation.models import Assignment, Item, Project


def answer_everything(project: Project, *, seed: int = 0, limit: int | None = None) -> int:
    """Submit every unsubmitted assignment of `project` (at most `limit`); returns how many."""
    rng = random.Random(seed)
    items = Item.objects.filter(project=project)
    infos = ItemInfo.read(items)
    by_kind: dict[str, dict[int, ItemInfo]] = defaultdict(dict)
    for pk, info in infos.items():
        by_kind[info.kind][pk] = info
    expected: dict[int, list[tuple[str, str]]] = {}
    for name, of_kind in by_kind.items():
        expected.update(kinds.get(name).expected(project, of_kind))
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
