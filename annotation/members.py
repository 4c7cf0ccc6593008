"""Adding a member to a project, for the page and the API alike.

Anyone who researches a project may create a new account for it (through Django's
username and password validators). Adding an existing account by its username is for
users who may create projects (`annotation.add_project`, the "researchers" group), so a
project's researcher cannot probe which usernames exist or pull in any account.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from .models import Membership, Project

CREATE_PROJECTS = "annotation.add_project"


def researchers_group() -> Group:
    """The group whose members may create projects (made by migration 0005; made again
    here when a database was emptied since)."""
    group, created = Group.objects.get_or_create(name="researchers")
    if created:
        group.permissions.add(
            Permission.objects.get(content_type__app_label="annotation", codename="add_project")
        )
    return group


class MemberError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str = "username") -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


def _first_message(error: ValidationError) -> str:
    return " ".join(error.messages)


def add_member(
    *, project: Project, by: User, username: str, role: str, password: str = ""
) -> Membership:
    """Add `username` to the project: a new account when a password is given, else an
    existing one (for users who may create projects). MemberError says what went wrong."""
    if not password:
        if not by.has_perm(CREATE_PROJECTS):
            raise MemberError(
                403,
                "permission_denied",
                "Only researchers who may create projects add existing accounts; "
                "give a password to create a new account.",
            )
        user = User.objects.filter(username=username).first()
        if user is None:
            raise MemberError(
                400, "unknown_user", f"No user '{username}'. Give a password to create the account."
            )
        return project.add_member(user, role)
    user = User(username=username)
    try:
        user.full_clean(exclude=["password"])  # the username's validators and uniqueness
    except ValidationError as e:
        raise MemberError(400, "invalid_username", _first_message(e)) from e
    try:
        validate_password(password, user)
    except ValidationError as e:
        raise MemberError(400, "invalid_password", _first_message(e), field="password") from e
    with transaction.atomic():
        user.set_password(password)
        user.save()
        return project.add_member(user, role)
