"""A small client for Prolific's documented REST API (plain Python, no Django).

Every call sends `Authorization: Token <token>` to the workspace's base URL (Prolific's:
https://api.prolific.com/api/v1/). The calls and their shapes follow Prolific's API
reference (docs.prolific.com/api-reference) and the `pyrolific` client generated from
its OpenAPI description (pyrolific 1.5.1: `api/studies`, `api/submissions`,
`api/bonuses`, `models/bulk_bonus.py`, `models/submission_detail.py`). pyrolific is not a
dependency: it pins httpx below 0.28 and brings attrs and dateutil for a dozen calls.

Retries: a 429 is retried after its `Retry-After` (the request was refused, nothing
happened); a 5xx or no answer is retried with exponential backoff only for a call that is
safe to repeat (`safe=True`: reads, transitions, creating a bulk bonus that nothing pays
yet). Paying a bulk bonus is not idempotent (Prolific: "Sending multiple requests with the
same bulk bonus payment ID will result in participants being paid multiple times"), so a
5xx or a timeout there is an `Unanswered` error: the caller reconciles by reading the
submissions' bonus payments back, never by sending it again. The sleeper is injected:
tests never wait on the wall clock.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

BASE_URL = "https://api.prolific.com/api/v1/"
MAX_RETRY_AFTER = 300.0  # seconds: a longer Retry-After is an error, not a wait
# a rejection's `rejection_category` (pyrolific models/submission_transition_rejection_category.py)
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)


class ProlificError(Exception):
    """An answer from Prolific that is an error: its status, the message and the field
    messages of a 400 (`fields`: field -> messages)."""

    def __init__(self, status: int, message: str, fields: dict[str, list[str]] | None = None):
        self.status = status
        self.fields = fields or {}
        detail = "; ".join(f"{k}: {' '.join(v)}" for k, v in self.fields.items())
        super().__init__(
            f"Prolific answered {status}: {message}" + (f" ({detail})" if detail else "")
        )


class WrongToken(ProlificError):
    """401 or 403: the workspace's token is wrong, expired or lacks the right."""


class Unanswered(ProlificError):
    """No usable answer (a 5xx, a timeout, a dropped connection) after the retries, or at
    once for a call that is not safe to repeat: whether it took effect is unknown."""


def _fields(detail: Any) -> dict[str, list[str]]:
    if not isinstance(detail, dict):
        return {}
    return {
        str(k): [str(m) for m in (v if isinstance(v, list) else [v])] for k, v in detail.items()
    }


def error_of(status: int, body: bytes) -> ProlificError:
    """The error an answer is: Prolific's `{"error": {"title", "detail"}}` (detail a
    message or field -> messages), or a plain `{"detail": ...}`."""
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        data = {}
    err = data.get("error", data) if isinstance(data, dict) else {}
    if not isinstance(err, dict):
        err = {"detail": str(err)}
    detail = err.get("detail")
    message = str(err.get("title") or (detail if isinstance(detail, str) else "") or "error")
    fields = _fields(detail)
    if status in (401, 403):
        return WrongToken(
            status, f"{message}: the workspace's API token is wrong or lacks the right", fields
        )
    if status >= 500:
        return Unanswered(status, message, fields)
    return ProlificError(status, message, fields)


class Client:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        retries: int = 4,
        backoff: float = 1.0,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.token = token
        self.sleep = sleep
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout

    def _once(self, method: str, path: str, body: Any) -> tuple[int, bytes, str | None]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path.lstrip("/"),
            data=data,
            method=method,
            headers={
                "Authorization": f"Token {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.read(), None
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get("Retry-After")

    def request(self, method: str, path: str, body: Any = None, *, safe: bool) -> Any:
        """The JSON answer of one call (None for an empty one), retried as the module
        says; a ProlificError otherwise."""
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                status, payload, retry_after = self._once(method, path, body)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                if not safe or last:
                    raise Unanswered(0, f"no answer ({e})") from None
                self.sleep(self.backoff * 2**attempt)
                continue
            if status < 400:
                return json.loads(payload) if payload.strip() else None
            error = error_of(status, payload)
            if status == 429 and not last:
                self.sleep(self._retry_after(retry_after, attempt))
                continue
            if status >= 500 and safe and not last:
                self.sleep(self.backoff * 2**attempt)
                continue
            raise error
        raise AssertionError("unreachable")  # pragma: no cover

    def _retry_after(self, value: str | None, attempt: int) -> float:
        try:
            seconds = float(value) if value is not None else self.backoff * 2**attempt
        except ValueError:
            seconds = self.backoff * 2**attempt  # an HTTP date: back off instead
        if seconds > MAX_RETRY_AFTER:
            raise ProlificError(429, f"rate limited for {seconds:.0f} s: try again later")
        return max(seconds, 0.0)

    # --- the calls ----------------------------------------------------------------------

    def create_study(self, study: dict[str, Any]) -> dict[str, Any]:
        """POST /studies/: a draft (UNPUBLISHED) study. Not repeated on a 5xx: that could
        make two drafts."""
        result: dict[str, Any] = self.request("POST", "studies/", study, safe=False)
        return result

    def get_study(self, study_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.request("GET", f"studies/{study_id}/", safe=True)
        return result

    def transition_study(self, study_id: str, action: str) -> dict[str, Any]:
        """POST /studies/{id}/transition/ {"action": PUBLISH | PAUSE | START | STOP}."""
        result: dict[str, Any] = self.request(
            "POST", f"studies/{study_id}/transition/", {"action": action}, safe=True
        )
        return result

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        """GET /studies/{id}/submissions/: every page (`_links.next.href`, relative to
        the base URL only: a link elsewhere is not followed with the token)."""
        rows: list[dict[str, Any]] = []
        path: str | None = f"studies/{study_id}/submissions/"
        while path is not None:
            page = self.request("GET", path, safe=True) or {}
            rows += page.get("results", [])
            href = ((page.get("_links") or {}).get("next") or {}).get("href")
            path = href[len(self.base_url) :] if href and href.startswith(self.base_url) else None
        return rows

    def submission(self, submission_id: str) -> dict[str, Any]:
        """GET /submissions/{id}/: with `bonus_payments`, the bonuses paid on it in
        pence / cents (pyrolific's SubmissionDetail)."""
        result: dict[str, Any] = self.request("GET", f"submissions/{submission_id}/", safe=True)
        return result

    def transition_submission(self, submission_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST /submissions/{id}/transition/ {"action": APPROVE} or {"action": REJECT,
        "message" (at least 100 characters), "rejection_category"}."""
        result: dict[str, Any] = self.request(
            "POST", f"submissions/{submission_id}/transition/", body, safe=True
        )
        return result

    def request_return(self, submission_id: str, reasons: list[str]) -> dict[str, Any]:
        """POST /submissions/{id}/request-return/ {"request_return_reasons": [...]}."""
        result: dict[str, Any] = self.request(
            "POST",
            f"submissions/{submission_id}/request-return/",
            {"request_return_reasons": reasons},
            safe=True,
        )
        return result

    def create_bonus_payments(self, study_id: str, csv_bonuses: str) -> dict[str, Any]:
        """POST /submissions/bonus-payments/ {"study_id", "csv_bonuses": "pid,4.25\\n..."}
        -> a BulkBonus {"id", "study", "amount" (cents), "fees", "vat", "total_amount"}.
        Nothing is paid yet: safe to repeat (an unpaid bulk bonus costs nothing)."""
        result: dict[str, Any] = self.request(
            "POST",
            "submissions/bonus-payments/",
            {"study_id": study_id, "csv_bonuses": csv_bonuses},
            safe=True,
        )
        return result

    def pay_bonus_payments(self, bulk_id: str) -> None:
        """POST /bulk-bonus-payments/{id}/pay/: NOT idempotent, never repeated here."""
        self.request("POST", f"bulk-bonus-payments/{bulk_id}/pay/", {}, safe=False)
