"""A busy SQLite database answers 503 with Retry-After instead of a 500.

SQLite has one writer at a time; a request that waited SQLITE_TIMEOUT seconds for the
write lock gets "database is locked". That is a temporary condition, not a bug: the
client (a page, a script) should try again shortly, and nothing was written.
"""

from __future__ import annotations

from collections.abc import Callable

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
