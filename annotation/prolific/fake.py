"""A fake Prolific server for tests and the demo (plain Python: no Django), speaking the
calls `client.py` makes in the shapes of Prolific's API reference and of pyrolific
(generated from Prolific's OpenAPI description), on 127.0.0.1 in a background thread, like
pipeline/fakes.py:

    with FakeProlific() as prolific:
        client = Client(prolific.base_url, prolific.token)

Its errors are Prolific's: 401 for a wrong token; 400 `{"error": {"status", "error_code",
"title", "detail": {field: [messages]}}}` for a request it refuses (a missing study field,
a rejection message under 100 characters, a bonus for someone not in the study); 429 with
`Retry-After` and 5xx when a test asks for them (`fail`). Paying a bulk bonus twice pays
twice, as Prolific warns its endpoint does: `paid` lists every payment made.

`hold_pay()` makes the next pay call pay and then wait before answering (until
`release()`), so a test can kill its caller between the call and its record.

Besides Prolific's paths it answers POST /fake/submissions/ {"study_id", "participant_id",
"status"} (a participant taking the study), for tests and the demo.
`python -m annotation.prolific.fake --port N` runs it in its own process.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from contextlib import nullcontext
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .client import REJECTION_CATEGORIES

TOKEN = "fake-prolific-token"
STUDY_FIELDS = (
    "name",
    "description",
    "external_study_url",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "reward",
)
TRANSITIONS = {
    ("PUBLISH", "UNPUBLISHED"): "ACTIVE",
    ("PAUSE", "ACTIVE"): "PAUSED",
    ("START", "PAUSED"): "ACTIVE",
    ("STOP", "ACTIVE"): "COMPLETED",
    ("STOP", "PAUSED"): "COMPLETED",
}
_ROUTES = [
    ("POST", re.compile(r"studies/"), "create_study"),
    ("GET", re.compile(r"studies/(\w+)/"), "get_study"),
    ("POST", re.compile(r"studies/(\w+)/transition/"), "transition_study"),
    ("GET", re.compile(r"studies/(\w+)/submissions/"), "list_submissions"),
    ("GET", re.compile(r"submissions/(\w+)/"), "get_submission"),
    ("POST", re.compile(r"submissions/(\w+)/transition/"), "transition_submission"),
    ("POST", re.compile(r"submissions/(\w+)/request-return/"), "request_return"),
    ("POST", re.compile(r"submissions/bonus-payments/"), "create_bonus"),
    ("POST", re.compile(r"bulk-bonus-payments/(\w+)/pay/"), "pay_bonus"),
]


def new_id() -> str:
    """A Prolific id: 24 lowercase hexadecimal characters."""
    return secrets.token_hex(12)


def invalid(**fields: str) -> tuple[int, Any]:
    return 400, {
        "error": {
            "status": 400,
            "error_code": 140001,
            "title": "Invalid request",
            "detail": {k: [v] for k, v in fields.items()},
        }
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeProlific


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status, answer, headers = self.server.owner.handle(method, self.path, self.headers, body)
        payload = b"" if answer is None else json.dumps(answer).encode()
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller is gone (a test killed it)


class FakeProlific:
    def __init__(self, *, token: str = TOKEN, port: int = 0) -> None:
        self.token = token
        self.studies: dict[str, dict[str, Any]] = {}
        self.submissions: dict[str, dict[str, Any]] = {}
        self.bulk: dict[str, dict[str, Any]] = {}
        self.paid: list[tuple[str, int]] = []  # (participant id, cents): every payment made
        self.requests: list[tuple[str, str]] = []  # (method, path)
        self._faults: list[tuple[str, int, dict[str, str]]] = []  # (path part, status, headers)
        self._lock = threading.RLock()
        self.pay_seen = threading.Event()  # a pay call arrived while held
        self._held = False
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1/"

    def start(self) -> FakeProlific:
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeProlific:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests arrange -------------------------------------------------------------

    def fail(self, path_part: str, status: int, times: int = 1, retry_after: str = "") -> None:
        """The next `times` requests whose path holds `path_part` answer `status`."""
        headers = {"Retry-After": retry_after} if retry_after else {}
        with self._lock:
            self._faults += [(path_part, status, headers)] * times

    def hold_pay(self) -> None:
        self._held = True

    def release(self) -> None:
        self._release.set()

    def add_submission(
        self, study_id: str, participant_id: str, status: str = "AWAITING REVIEW"
    ) -> dict[str, Any]:
        """A participant took the study: their submission (its id is their SESSION_ID)."""
        with self._lock:
            sub_id = new_id()
            sub: dict[str, Any] = {
                "id": sub_id,
                "participant_id": participant_id,
                "study_id": study_id,
                "status": status,
                "started_at": "2026-11-28T09:00:00.000000Z",
                "completed_at": None if status == "ACTIVE" else "2026-11-28T09:30:00.000000Z",
                "study_code": "",
                "bonus_payments": [],
            }
            self.submissions[sub_id] = sub
            return sub

    # --- the server ---------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: Any, body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            self.requests.append((method, path))
            fault = next((f for f in self._faults if f[0] in path), None)
            if fault is not None:
                self._faults.remove(fault)
        if fault is not None:
            return fault[1], {"error": {"status": fault[1], "title": "fault (fake)"}}, fault[2]
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            return (*invalid(body="not JSON"), {})
        if path == "/fake/submissions/" and method == "POST":
            sub = self.add_submission(
                str(data.get("study_id", "")),
                str(data.get("participant_id", "")),
                str(data.get("status", "AWAITING REVIEW")),
            )
            return 201, sub, {}
        if headers.get("Authorization") != f"Token {self.token}":
            return (
                401,
                {"error": {"status": 401, "title": "Unauthorized", "detail": "Invalid token."}},
                {},
            )
        rest = path.split("?", 1)[0].removeprefix("/api/v1/")
        for verb, pattern, name in _ROUTES:
            if verb == method and (m := pattern.fullmatch(rest)):
                # the pay call locks only while it pays: a held answer blocks nobody
                with self._lock if name != "pay_bonus" else nullcontext():
                    status, answer = getattr(self, name)(data, *m.groups())
                return status, answer, {}
        return 404, {"error": {"status": 404, "title": "Not found"}}, {}

    def create_study(self, data: dict[str, Any]) -> tuple[int, Any]:
        missing = {
            f: "This field is required." for f in STUDY_FIELDS if data.get(f) in (None, "", [])
        }
        if missing:
            return invalid(**missing)
        for f in ("total_available_places", "estimated_completion_time", "reward"):
            if not isinstance(data[f], int | float) or data[f] <= 0:
                return invalid(**{f: "A positive number is required."})
        if "{{%PROLIFIC_PID%}}" not in data["external_study_url"]:
            return invalid(external_study_url="The URL does not pass {{%PROLIFIC_PID%}}.")
        for code in data["completion_codes"]:
            if not isinstance(code, dict) or not code.get("code") or not code.get("code_type"):
                return invalid(completion_codes="Each code needs a code and a code_type.")
        study = {**data, "id": new_id(), "status": "UNPUBLISHED"}
        self.studies[study["id"]] = study
        return 201, study

    def get_study(self, data: dict[str, Any], study_id: str) -> tuple[int, Any]:
        if study_id not in self.studies:
            return 404, {"error": {"status": 404, "title": "Study not found"}}
        return 200, self.studies[study_id]

    def transition_study(self, data: dict[str, Any], study_id: str) -> tuple[int, Any]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, {"error": {"status": 404, "title": "Study not found"}}
        to = TRANSITIONS.get((str(data.get("action")), study["status"]))
        if to is None:
            return invalid(action=f"{data.get('action')!r} is not possible from {study['status']}.")
        study["status"] = to
        return 200, study

    def list_submissions(self, data: dict[str, Any], study_id: str) -> tuple[int, Any]:
        rows = [
            {
                k: s[k]
                for k in (
                    "id",
                    "participant_id",
                    "status",
                    "started_at",
                    "completed_at",
                    "study_code",
                )
            }
            | {"has_siblings": False}
            for s in self.submissions.values()
            if s["study_id"] == study_id
        ]
        return 200, {
            "results": rows,
            "_links": {"next": {"href": None}},
            "meta": {"count": len(rows)},
        }

    def get_submission(self, data: dict[str, Any], sub_id: str) -> tuple[int, Any]:
        s = self.submissions.get(sub_id)
        if s is None:
            return 404, {"error": {"status": 404, "title": "Submission not found"}}
        return 200, {
            "id": s["id"],
            "study_id": s["study_id"],
            "participant": s["participant_id"],
            "status": s["status"],
            "started_at": s["started_at"],
            "completed_at": s["completed_at"],
            "entered_code": s["study_code"],
            "bonus_payments": list(s["bonus_payments"]),
        }

    def transition_submission(self, data: dict[str, Any], sub_id: str) -> tuple[int, Any]:
        s = self.submissions.get(sub_id)
        if s is None:
            return 404, {"error": {"status": 404, "title": "Submission not found"}}
        action = data.get("action")
        if s["status"] != "AWAITING REVIEW":
            return invalid(action=f"A submission in {s['status']} cannot be changed.")
        if action == "APPROVE":
            s["status"] = "APPROVED"
        elif action == "REJECT":
            if len(str(data.get("message") or "")) < 100:
                return invalid(message="The message must be at least 100 characters long.")
            if data.get("rejection_category") not in REJECTION_CATEGORIES:
                return invalid(rejection_category="A valid rejection category is required.")
            s["status"] = "REJECTED"
        else:
            return invalid(action="APPROVE, REJECT or COMPLETE.")
        return 200, self.get_submission({}, sub_id)[1]

    def request_return(self, data: dict[str, Any], sub_id: str) -> tuple[int, Any]:
        s = self.submissions.get(sub_id)
        if s is None:
            return 404, {"error": {"status": 404, "title": "Submission not found"}}
        reasons = data.get("request_return_reasons")
        if not isinstance(reasons, list) or not reasons or not all(reasons):
            return invalid(request_return_reasons="At least one reason is required.")
        s["return_requested"] = reasons
        return 200, {"id": sub_id, "status": s["status"], "participant": s["participant_id"]}

    def create_bonus(self, data: dict[str, Any]) -> tuple[int, Any]:
        study_id = str(data.get("study_id", ""))
        if study_id not in self.studies:
            return invalid(study_id="Study not found.")
        rows: list[tuple[str, int]] = []
        for n, line in enumerate(str(data.get("csv_bonuses", "")).splitlines(), 1):
            pid, _, amount = line.partition(",")
            try:
                value = Decimal(amount.strip())
            except InvalidOperation:
                return invalid(csv_bonuses=f"Line {n}: {amount!r} is not an amount.")
            if not value.is_finite() or value <= 0:
                return invalid(csv_bonuses=f"Line {n}: the amount must be positive.")
            if not any(
                s["participant_id"] == pid.strip() and s["study_id"] == study_id
                for s in self.submissions.values()
            ):
                return invalid(csv_bonuses=f"Line {n}: {pid!r} has no submission in the study.")
            rows.append((pid.strip(), int(value * 100)))
        if not rows:
            return invalid(csv_bonuses="No bonuses.")
        total = sum(c for _, c in rows)
        bulk_id = new_id()
        bulk: dict[str, Any] = {
            "id": bulk_id,
            "study": study_id,
            "amount": total,
            "fees": round(total / 3, 2),
            "vat": 0,
            "total_amount": round(total * 4 / 3, 2),
        }
        self.bulk[bulk_id] = {**bulk, "rows": rows}
        return 201, bulk

    def pay_bonus(self, data: dict[str, Any], bulk_id: str) -> tuple[int, Any]:
        with self._lock:
            bulk = self.bulk.get(bulk_id)
            if bulk is None:
                return 404, {"error": {"status": 404, "title": "Bulk bonus payment not found"}}
            for pid, cents in bulk["rows"]:  # not idempotent: a second call pays again
                self.paid.append((pid, cents))
                for s in self.submissions.values():
                    if s["participant_id"] == pid and s["study_id"] == bulk["study"]:
                        s["bonus_payments"].append(cents)
                        break
        if self._held:
            self.pay_seen.set()
            self._release.wait()
        return 202, None


def main() -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Run the fake Prolific server.")
    parser.add_argument("--port", type=int, default=0, help="0: a free one")
    args = parser.parse_args()
    fake = FakeProlific(port=args.port).start()
    print(json.dumps({"prolific": fake.base_url, "token": fake.token}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
