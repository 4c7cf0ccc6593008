"""The page header of a hired annotator (`{{ user|hired_as }}`): their pseudonym, never
the internal username; "" for everyone else (no query for them)."""

from __future__ import annotations

from typing import Any

from django import template

from ..hiring import Hire

register = template.Library()


@register.filter
def hired_as(user: Any) -> str:
    # Hires' accounts are made by hiring.join: a "w-" name and no usable password.
    if not user.username.startswith("w-") or user.has_usable_password():
        return ""
    if (known := getattr(user, "hired_pseudonym", None)) is not None:
        return str(known)  # read with the membership by the page (views.common)
    hire = Hire.objects.filter(membership__user=user).select_related("membership").first()
    return hire.membership.pseudonym if hire else ""
