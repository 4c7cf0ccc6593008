"""Error pages: under /api/ every error is the API's JSON `{code, message}` (a 500 or a
404 from outside a view too); elsewhere Django's pages, and a 400 says what was wrong."""

from __future__ import annotations

import re

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _json(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"code": code, "message": message}, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    # Only our own BadRequest messages are shown: others (a disallowed host, ...) may
    # name settings.
    message = str(exception) if type(exception) is BadRequest else "Bad request."
    if _api(request):
        return _json(400, "bad_request", message)
    return render(request, "400.html", {"message": message}, status=400)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _api(request):
        return _json(403, "permission_denied", "You do not have permission to do this.")
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _api(request):
        return _json(404, "not_found", "Not found.")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _api(request):
        return _json(500, "server_error", "Internal error; it has been logged.")
    return defaults.server_error(request)


def posted_id(request: HttpRequest, name: str) -> int:
    """An id from a posted form field; a malformed one is a 400 that names the field."""
    value = request.POST.get(name, "")
    if not re.fullmatch(r"[0-9]{1,18}", value):
        raise BadRequest(f"The field '{name}' must be an id (up to 18 digits), not {value[:40]!r}.")
    return int(value)
