"""Error shape, throttling and pagination shared by every endpoint.

Every error body is `{"code", "message"}` plus `field` and `line` where they apply;
several problems at once (a form, an import file) also list each one in `errors`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions, serializers
from rest_framework.authtoken.models import Token
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import exception_handler as drf_exception_handler

from ..ingest import LineError


class ApiError(exceptions.APIException):
    """An error with our own code, e.g. `ApiError(409, "already_submitted", "...")`."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        errors: list[dict[str, Any]] | None = None,
    ):
        self.status_code = status_code
        self.code, self.message, self.field, self.errors = code, message, field, errors
        super().__init__(detail=message, code=code)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field:
            body["field"] = self.field
        if self.errors:
            body["errors"] = self.errors
        return body


def form_error(form: Any, *, field_names: dict[str, str] | None = None) -> ApiError:
    """A Django form's errors as one 400 ApiError; `field_names` renames form fields."""
    errors = []
    for name, messages in form.errors.get_json_data().items():
        for m in messages:
            entry: dict[str, Any] = {"code": m["code"] or "invalid", "message": m["message"]}
            if name != "__all__":
                entry["field"] = (field_names or {}).get(name, name)
            errors.append(entry)
    first = errors[0] if errors else {"code": "invalid", "message": "Invalid input."}
    return ApiError(400, first["code"], first["message"], field=first.get("field"), errors=errors)


def import_error(errors: list[LineError]) -> ApiError:
    rows = [
        {
            "code": "invalid_line",
            "message": e.message,
            "file": e.file,
            "line": e.line,
            **({"field": e.field} if e.field else {}),
        }
        for e in errors
    ]
    message = f"{len(errors)} error(s), nothing was imported. First: {errors[0]}"
    err = ApiError(400, "import_failed", message, errors=rows)
    return err


def _flatten(detail: Any, prefix: str = "") -> list[dict[str, Any]]:
    """DRF's nested ValidationError detail -> [{code, message, field}]."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            out += _flatten(value, f"{prefix}.{name}" if prefix and name else prefix or name)
        return out
    if isinstance(detail, list):
        out = []
        for i, value in enumerate(detail):
            nested = isinstance(value, (dict, list))
            out += _flatten(value, f"{prefix}[{i}]" if nested else prefix)
        return out
    entry = {"code": getattr(detail, "code", None) or "invalid", "message": str(detail)}
    if prefix:
        entry["field"] = prefix
    return [entry]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApiError):
        return Response(exc.body(), status=exc.status_code)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound("Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        first = errors[0] if errors else {"code": "invalid", "message": "Invalid input."}
        body = {**first, "errors": errors}
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        body = {"code": codes if isinstance(codes, str) else "error", "message": str(exc.detail)}
    else:  # pragma: no cover - DRF only handles APIException subclasses
        body = {"code": "error", "message": str(exc)}
    response.data = body
    return response


class ErrorSerializer(serializers.Serializer):
    """The body of every error response."""

    code = serializers.CharField()
    message = serializers.CharField()
    field = serializers.CharField(required=False)
    line = serializers.IntegerField(required=False)
    file = serializers.CharField(required=False)
    errors = serializers.ListField(child=serializers.DictField(), required=False)  # type: ignore[assignment]


class TokenWriteThrottle(UserRateThrottle):
    """Limits writes made with an API token (scripts); reads and browser sessions are free.
    The rate is read per request from settings.API_WRITE_RATE so it can be changed
    without a restart of the test process."""

    scope = "token-write"

    def get_rate(self) -> str | None:
        return settings.API_WRITE_RATE or None

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS") or not isinstance(request.auth, Token):
            return True
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class Pagination(PageNumberPagination):
    page_size = settings.API_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = 1000


def paginated(
    request: Request, view: Any, rows: Any, serializer: type[serializers.Serializer]
) -> Response:
    paginator = Pagination()
    page: Any = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(serializer(page, many=True).data)


_PAGE_CACHE: dict[str, type[serializers.Serializer]] = {}


def page_of(serializer: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The schema of one page: {count, next, previous, results: [...]}."""
    if name not in _PAGE_CACHE:
        _PAGE_CACHE[name] = type(
            name,
            (serializers.Serializer,),
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": serializer(many=True),
                "__module__": __name__,
            },
        )
    return _PAGE_CACHE[name]
