"""A busy SQLite database answers 503 with Retry-After instead of a 500; JSON nested
deeper than JSON_MAX_DEPTH answers 400 before any parser recurses into it.

SQLite has one writer at a time; a request that waited SQLITE_TIMEOUT seconds for the
write lock gets "database is locked". That is a temporary condition, not a bug: the
client (a page, a script) should try again shortly, and nothing was written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

RETRY_AFTER_SECONDS = 2


def is_busy(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)


class DatabaseBusyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_busy(exception):
            return None
        message = "The database is busy; nothing was saved. Try again in a moment."
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse({"code": "database_busy", "message": message}, status=503)
        else:
            # A page of its own: the site's base template reads the session and messages.
            response = HttpResponse(render_to_string("503.html", {"message": message}), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


_TOKEN = re.compile(r'\\.|["\[\]{}]', re.S)


def too_deep(text: str, limit: int) -> bool:
    """Whether brackets nest deeper than `limit` in `text` outside JSON strings, found
    without parsing it (the parsers recurse: a deep enough document is a RecursionError,
    a 500). One pass over the quotes, brackets and escapes."""
    depth, in_string = 0, False
    for match in _TOKEN.finditer(text):
        token = match[0]
        if token == '"':
            in_string = not in_string
        elif in_string or token[0] == "\\":
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class JsonDepthMiddleware:
    """Refuse, with 400, a request whose JSON body or any form value nests deeper than
    JSON_MAX_DEPTH (every JSON endpoint and every form's JSON field, in one place)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (limit := settings.JSON_MAX_DEPTH) and self._too_deep(request, limit):
            message = f"The data is nested deeper than {limit} levels."
            if request.path.startswith("/api/"):
                return JsonResponse({"code": "parse_error", "message": message}, status=400)
            return HttpResponse(
                render_to_string("400.html", {"message": message}, request=request), status=400
            )
        return self.get_response(request)

    @staticmethod
    def _too_deep(request: HttpRequest, limit: int) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            texts = [v for values in request.GET.lists() for v in values[1]]
        elif "json" in (request.content_type or ""):
            texts = [request.body.decode("utf-8", "replace")]
        elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            # the form's values; an uploaded file is read by its import, which refuses
            # a deep record itself
            texts = [v for values in request.POST.lists() for v in values[1]]
        else:
            return False
        return any(("[" in t or "{" in t) and too_deep(t, limit) for t in texts)
