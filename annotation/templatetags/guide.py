"""`{% guide "researchers/hiring" "Hiring annotators" %}`: a line linking a page to its guide
in the manual (docs/). The manual is not served by Django: DOCS_URL is where the operator
publishes the built site (`make docs-build`); without it the line names the page's file in
the repository."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


def source(page: str) -> str:
    """The Markdown file of a manual page: "researchers/hiring" or "researchers/" (its index)."""
    return f"docs/{page}index.md" if page.endswith("/") else f"docs/{page}.md"


@register.simple_tag
def guide(page: str, title: str) -> SafeString:
    base = settings.DOCS_URL
    if not base:
        return format_html(
            '<p class="hint">Guide: {} (<code>{}</code> in the repository)</p>', title, source(page)
        )
    url = base.rstrip("/") + "/" + (page if page.endswith("/") else page + "/")
    return format_html('<p class="hint">Guide: <a href="{}">{}</a></p>', url, title)
