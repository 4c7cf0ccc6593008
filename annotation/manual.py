"""Links into the manual (docs/, mkdocs). The manual is not served by Django: DOCS_URL is
where the operator publishes the built site; without it a link names the page's file in
the repository. Used by the `{% guide %}` tag and by forms' help texts."""

from __future__ import annotations

from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString


def source(page: str) -> str:
    """The Markdown file of a manual page: "researchers/hiring" or "researchers/" (its index)."""
    return f"docs/{page}index.md" if page.endswith("/") else f"docs/{page}.md"


def url(page: str) -> str:
    """The page on the published manual, '' without DOCS_URL."""
    base = settings.DOCS_URL
    if not base:
        return ""
    return base.rstrip("/") + "/" + (page if page.endswith("/") else page + "/")


def link(page: str, title: str) -> SafeString:
    """The manual's page as a link, or its title and file without DOCS_URL."""
    address = url(page)
    if address:
        return format_html('<a href="{}">{}</a>', address, title)
    return format_html("{} (<code>{}</code> in the repository)", title, source(page))
