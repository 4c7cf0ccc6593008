"""`{% guide "researchers/hiring" "Hiring annotators" %}`: a line linking a page to its guide
in the manual (docs/), through annotation.manual (DOCS_URL)."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .. import manual

register = template.Library()
source = manual.source  # kept for callers of guide.source


@register.simple_tag
def guide(page: str, title: str) -> SafeString:
    return format_html('<p class="hint">Guide: {}</p>', manual.link(page, title))
