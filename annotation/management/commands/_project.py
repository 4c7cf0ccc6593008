from __future__ import annotations

from django.core.management.base import CommandError

from ...models import Project


def find_project(ref: str) -> Project:
    """A project by id or exact name."""
    project = Project.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
    project = project or Project.objects.filter(name=ref).first()
    if project is None:
        raise CommandError(f"No project with id or name {ref!r}.")
    return project
