"""A kind's title on pages (`{{ item.kind|kind_title }}`): from the registry, no query."""

from __future__ import annotations

from django import template

from .. import kinds

register = template.Library()


@register.filter
def kind_title(kind: str) -> str:
    return kinds.get(kind).title
