"""Webhooks: a project's events, signed and sent to the URLs its researchers set.

An event is written as one `WebhookDelivery` row per hook that asked for it, in the
transaction of the change it tells of (`emit`), so a change that commits has its
deliveries and one that rolls back has none; the task worker sends them after the
commit (`deliver`). A delivery's `key` says what happened (an assignment's id, a hire's):
one row per hook and key, so an event told twice is sent once.

Each attempt is one POST of the JSON payload with the headers

    X-Webhook-Event:      the event's name
    X-Webhook-Delivery:   the delivery's id (the same on every attempt: a receiver's dedupe key)
    X-Webhook-Timestamp:  the attempt's time, whole seconds since 1970 (UTC)
    X-Webhook-Signature:  sha256=HEX, HMAC-SHA256 with the hook's secret over
                          "<timestamp>.<body>" (the body's bytes as sent)

A receiver checks the signature and refuses a timestamp outside its replay window
(`verify`; the manual's Python example is the same code). An answer other than 2xx is
a failure, a redirect too (it is never followed); a failed attempt is tried again after
WEBHOOK_BACKOFF_SECONDS, doubled at each attempt, up to WEBHOOK_ATTEMPTS attempts. A
worker killed while sending leaves the delivery claimed until its claim runs out; the
next sweep (`requeue_due`: after every delivery of the project, and on the hooks page)
sends it again, as it does a delivery whose task was never enqueued.

Targets: only URLs the operator allows (WEBHOOK_ALLOWED_TARGETS: hosts, URL prefixes,
addresses or networks). The host is resolved at each attempt and the connection made to
the address that was checked (never resolved again by the HTTP client: a DNS answer that
changes between the check and the call cannot slip a private address through); a
private, loopback, link-local or otherwise special address is refused unless the
operator listed it. Payloads carry ids and counts only: no answers, no labels, no
worker ids, no names.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from django import forms
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.tasks import task
from django.utils import timezone

from .models import Assignment, Item, PipelineRun, Webhook, WebhookDelivery

if TYPE_CHECKING:
    from .hiring.models import Hire
    from .ingest import ImportSummary

EVENTS = Webhook.EVENTS
SIGNATURE_HEADER = "X-Webhook-Signature"
TIMESTAMP_HEADER = "X-Webhook-Timestamp"
EVENT_HEADER = "X-Webhook-Event"
DELIVERY_HEADER = "X-Webhook-Delivery"
REPLAY_WINDOW_SECONDS = 300  # what `verify` accepts by default (the manual's example too)
MAX_BACKOFF_SECONDS = 6 * 3600
LOG_ENTRIES = 20  # attempts kept in a delivery's log
USER_AGENT = "factuality-annotation-webhooks/1"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def clock() -> datetime:
    """The time of attempts and backoff: timezone.now(). Tests pass `now` instead."""
    return timezone.now()


# --- signing --------------------------------------------------------------------------------


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value: sha256=HMAC-SHA256(secret, "<timestamp>.<body>")."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(
    secret: str,
    body: bytes,
    signature: str,
    timestamp: str,
    *,
    now: float | None = None,
    window: int = REPLAY_WINDOW_SECONDS,
) -> bool:
    """What a receiver checks: the timestamp is within `window` seconds of `now` and the
    signature is the body's under the secret (compared in constant time)."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > window:
        return False
    return hmac.compare_digest(sign(secret, sent, body), signature)


# --- targets --------------------------------------------------------------------------------


class Refused(ValueError):
    """A target the operator's list does not allow, or one that resolves to an address it
    may not reach."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # as written (lowercase), without brackets
    port: int
    address: Address  # the checked address the connection goes to


def _entries() -> tuple[list[Any], list[str], list[tuple[str, str, int, str]]]:
    """The operator's list, parsed: networks, host patterns, URL prefixes."""
    networks: list[Any] = []
    hosts: list[str] = []
    prefixes: list[tuple[str, str, int, str]] = []
    for entry in settings.WEBHOOK_ALLOWED_TARGETS:
        if "://" in entry:
            p = urlsplit(entry)
            scheme = p.scheme.lower()
            port = p.port or (443 if scheme == "https" else 80)
            prefixes.append((scheme, (p.hostname or "").lower(), port, p.path or "/"))
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.append(entry.lower().strip("[]"))
    return networks, hosts, prefixes


def _host_listed(host: str, hosts: Iterable[str]) -> bool:
    return any(
        host == h or (h.startswith("*.") and host.endswith(h[1:]) and host != h[2:]) for h in hosts
    )


def _special(address: Address) -> bool:
    return not address.is_global or address.is_multicast


def parse_target(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL the list allows; Refused says why not."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise Refused(f"not a URL: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused("only http and https URLs can be notified")
    if parts.username or parts.password:
        raise Refused("a webhook URL may not carry a user name or password")
    host = (parts.hostname or "").lower()
    if not host:
        raise Refused("the URL has no host")
    port = port or (443 if scheme == "https" else 80)
    networks, hosts, prefixes = _entries()
    if not settings.WEBHOOK_ALLOWED_TARGETS:
        raise Refused("the operator allows no webhook targets (WEBHOOK_ALLOWED_TARGETS)")
    path = parts.path or "/"
    by_prefix = any(
        (scheme, host, port) == (s, h, p) and (path.startswith(pp) or path + "/" == pp)
        for s, h, p, pp in prefixes
    )
    literal = _literal(host)
    by_network = literal is not None and any(
        n.version == literal.version and literal in n for n in networks
    )
    if not (by_prefix or by_network or _host_listed(host, hosts)):
        raise Refused(f"{host} is not among the targets the operator allows")
    return scheme, host, port


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _address_listed(address: Address, host: str) -> bool:
    """A special address is allowed when the operator listed it: its network or address,
    or a host or prefix that names this very address."""
    networks, hosts, prefixes = _entries()
    if any(address.version == n.version and address in n for n in networks):
        return True
    named = {h for h in hosts} | {h for _, h, _, _ in prefixes}
    return _literal(host) == address and str(address) in named


def resolve(url: str, *, lookup: Callable[..., Any] | None = None) -> Target:
    """The target's checked address: the URL allowed, its host resolved now, and every
    address it resolves to allowed (Refused otherwise)."""
    scheme, host, port = parse_target(url)
    try:
        infos = (lookup or socket.getaddrinfo)(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        raise Refused(f"{host} does not resolve ({e})") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise Refused(f"{host} does not resolve")
    for address in addresses:
        if _special(address) and not _address_listed(address, host):
            raise Refused(
                f"{host} resolves to {address}, a private, loopback or link-local address "
                "the operator has not listed"
            )
    return Target(url=url, scheme=scheme, host=host, port=port, address=addresses[0])


def check_url(url: str) -> str | None:
    """What is wrong with a webhook URL (the form's check), or None."""
    try:
        resolve(url)
    except Refused as e:
        return str(e)
    return None


class WebhookForm(forms.Form):
    """A webhook: the URL (one the operator allows, WEBHOOK_ALLOWED_TARGETS) and the
    events it is told of."""

    url = forms.CharField(
        label="URL",
        max_length=500,
        help_text="Called with a signed POST for each event; it must be among the targets "
        "the operator allows.",
    )
    events = forms.MultipleChoiceField(
        choices=[(e, e) for e in EVENTS], widget=forms.CheckboxSelectMultiple
    )

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"]).strip()
        if problem := check_url(url):
            raise forms.ValidationError(problem, code="refused")
        return url


# --- events ---------------------------------------------------------------------------------


def emit(project_id: int, event: str, key: str, data: Mapping[str, Any]) -> list[int]:
    """Write the event's deliveries, one per active hook of the project that asked for
    it, in the caller's transaction; the worker is told after the commit. `key` names what
    happened: told again, it is not sent again. Returns the new deliveries' ids."""
    assert event in EVENTS, event
    hooks = [
        h
        for h in Webhook.objects.filter(project_id=project_id, active=True).only("pk", "events")
        if event in h.events
    ]
    if not hooks:
        return []
    made = []
    for hook in hooks:
        try:
            with transaction.atomic():
                delivery = WebhookDelivery.objects.create(
                    hook=hook, event=event, key=key[:120], payload={}
                )
                delivery.payload = {
                    "id": delivery.pk,
                    "event": event,
                    "created": delivery.created_at.isoformat(),
                    "project": project_id,
                    "data": dict(data),
                }
                delivery.save(update_fields=["payload"])
        except IntegrityError:  # told already
            continue
        made.append(delivery.pk)
    if made:
        transaction.on_commit(lambda: _enqueue(made))
    return made


def wants(project_id: int, event: str) -> bool:
    """Whether an active hook of the project asked for the event (a check before work
    that only the event needs)."""
    return any(
        event in events
        for events in Webhook.objects.filter(project_id=project_id, active=True).values_list(
            "events", flat=True
        )
    )


def _enqueue(ids: Iterable[int], at: datetime | None = None) -> None:
    backend = deliver.get_backend()
    for pk in ids:
        if at is not None and backend.supports_defer:
            deliver.using(run_after=at).enqueue(pk)
        else:
            deliver.enqueue(pk)


# --- delivery -------------------------------------------------------------------------------


def body_of(delivery: WebhookDelivery) -> bytes:
    return json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()


def _post(target: Target, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """POST to the checked address itself (the Host header and TLS name are the URL's):
    no proxy from the environment, no redirect followed."""
    parts = urlsplit(target.url)
    ip = str(target.address)
    netloc = f"[{ip}]:{target.port}" if target.address.version == 6 else f"{ip}:{target.port}"
    url = urlunsplit((target.scheme, netloc, parts.path or "/", parts.query, ""))
    default = 443 if target.scheme == "https" else 80
    host = target.host if ":" not in target.host else f"[{target.host}]"
    headers = {**headers, "Host": host if target.port == default else f"{host}:{target.port}"}
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    with httpx.Client(
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
    ) as client:
        return client.post(url, content=body, headers=headers, extensions=extensions)


def _claim_seconds() -> float:
    """How long an attempt holds its delivery: past it, its worker is taken as gone."""
    return float(settings.WEBHOOK_TIMEOUT_SECONDS) * 3 + 30


def _claim(delivery_id: int, now: datetime) -> WebhookDelivery | None:
    """Take the delivery if it is due, or if the worker that held it stopped (its claim
    ran out). One UPDATE ... WHERE: of two workers, one gets it."""
    due = Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=now) | Q(
        status=WebhookDelivery.SENDING, claimed_until__lt=now
    )
    until = now + timedelta(seconds=_claim_seconds())
    taken = WebhookDelivery.objects.filter(due, pk=delivery_id).update(
        status=WebhookDelivery.SENDING, claimed_until=until, attempts=F("attempts") + 1
    )
    if not taken:
        return None
    return WebhookDelivery.objects.select_related("hook").get(pk=delivery_id)


def backoff(attempts: int) -> float:
    """Seconds before the attempt after `attempts` failed ones."""
    base = float(settings.WEBHOOK_BACKOFF_SECONDS)
    return float(min(base * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS))


def attempt(delivery_id: int, *, now: datetime | None = None) -> str:
    """One attempt at the delivery, if it is due: its status after it ("delivered",
    "pending" for a retry, "failed"), or "not due"."""
    now = now or clock()
    delivery = _claim(delivery_id, now)
    if delivery is None:
        return "not due"
    body = body_of(delivery)
    stamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: delivery.event,
        DELIVERY_HEADER: str(delivery.pk),
        TIMESTAMP_HEADER: str(stamp),
        SIGNATURE_HEADER: sign(delivery.hook.secret, stamp, body),
    }
    code, error, final = None, "", False
    started = time.perf_counter()
    try:
        response = _post(resolve(delivery.hook.url), body, headers)
        code = response.status_code
        if 300 <= code < 400:
            error = f"redirect to {response.headers.get('location', '?')[:200]} not followed"
        elif not 200 <= code < 300:
            error = response.text[:200]
    except Refused as e:
        error, final = f"refused: {e}", True  # the operator's list decides; no retry helps
    except httpx.HTTPError as e:
        error = f"{type(e).__name__}: {e}"[:300]
    return _record(delivery, now, code, error, final, time.perf_counter() - started)


def _record(
    delivery: WebhookDelivery,
    now: datetime,
    code: int | None,
    error: str,
    final: bool,
    seconds: float,
) -> str:
    ok = code is not None and 200 <= code < 300
    entry = {"at": now.isoformat(), "attempt": delivery.attempts, "code": code}
    entry.update({"ms": round(seconds * 1000), **({"error": error} if error else {})})
    fields: dict[str, Any] = {
        "log": [*delivery.log, entry][-LOG_ENTRIES:],
        "response_code": code,
        "claimed_until": None,
    }
    if ok:
        fields.update(status=WebhookDelivery.DELIVERED, delivered_at=now)
    elif final or delivery.attempts >= settings.WEBHOOK_ATTEMPTS:
        fields.update(status=WebhookDelivery.FAILED)
    else:
        later = now + timedelta(seconds=backoff(delivery.attempts))
        fields.update(status=WebhookDelivery.PENDING, next_attempt_at=later)
    mine = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=WebhookDelivery.SENDING, attempts=delivery.attempts
    )
    if not mine.update(**fields):
        return "taken over"
    if fields["status"] == WebhookDelivery.PENDING:
        transaction.on_commit(lambda: _enqueue([delivery.pk], at=fields["next_attempt_at"]))
    return str(fields["status"])


def requeue_due(project_id: int | None = None, *, now: datetime | None = None) -> int:
    """Enqueue the deliveries left behind: overdue by more than a claim's length (a retry
    whose task was lost, an enqueue that never happened) or claimed by a worker whose
    claim ran out (killed mid-call). Enqueueing one twice is harmless (the claim lets one
    attempt through)."""
    now = now or clock()
    # A delivery due only a moment ago has its task in the queue still: only one overdue
    # by a claim's length is taken as lost (else every delivery would enqueue the others).
    overdue = now - timedelta(seconds=_claim_seconds())
    due = WebhookDelivery.objects.filter(
        Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=overdue)
        | Q(status=WebhookDelivery.SENDING, claimed_until__lt=now)
    )
    if project_id is not None:
        due = due.filter(hook__project_id=project_id)
    ids = list(due.values_list("pk", flat=True)[:500])
    _enqueue(ids)
    return len(ids)


@task()
def deliver(delivery_id: int) -> str:
    outcome = attempt(delivery_id)
    project_id = (
        WebhookDelivery.objects.filter(pk=delivery_id)
        .values_list("hook__project_id", flat=True)
        .first()
    )
    if project_id is not None and outcome != "not due":
        requeue_due(project_id)
    return outcome


def redeliver(delivery: WebhookDelivery, *, now: datetime | None = None) -> bool:
    """Send a delivery again (the researcher's button): back to pending with fresh
    attempts, whatever became of it. False while an attempt is under way."""
    now = now or clock()
    entry = {"at": now.isoformat(), "attempt": delivery.attempts, "code": None}
    entry["note"] = "redelivery asked for"
    changed = (
        WebhookDelivery.objects.filter(pk=delivery.pk)
        .exclude(status=WebhookDelivery.SENDING, claimed_until__gte=now)
        .update(
            status=WebhookDelivery.PENDING,
            attempts=0,
            next_attempt_at=now,
            claimed_until=None,
            log=[*delivery.log, entry][-LOG_ENTRIES:],
        )
    )
    if changed:
        transaction.on_commit(lambda: _enqueue([delivery.pk]))
    return bool(changed)


# --- what each event says ------------------------------------------------------------------


def submitted(assignment: Assignment) -> None:
    """assignment.submitted, and item.completed when this submission was the item's last
    open one (every assignment it has, widened ones included, submitted). Called in the
    submission's transaction; the item's row is locked while its assignments are counted,
    so of two last answers at once exactly one sees the item complete."""
    project_id = assignment.item.project_id
    wanted = {e for events in _events(project_id) for e in events}
    if not wanted:
        return
    item_id = assignment.item_id
    if "assignment.submitted" in wanted:
        emit(
            project_id,
            "assignment.submitted",
            f"assignment:{assignment.pk}",
            {"assignment": assignment.pk, "item": item_id},
        )
    if (
        "item.completed" not in wanted
        or Item.objects.filter(pk=item_id, quality__isnull=False).exists()
    ):
        return  # training, check and example items are not the study's items
    Item.objects.select_for_update().filter(pk=item_id).values_list("pk").first()
    counts = Assignment.objects.filter(item_id=item_id).aggregate(
        total=Count("pk"), done=Count("pk", filter=Q(status=Assignment.SUBMITTED))
    )
    if counts["total"] and counts["done"] == counts["total"]:
        data = {"item": item_id, "annotators": counts["done"]}
        emit(project_id, "item.completed", f"item:{item_id}:{counts['done']}", data)


def _events(project_id: int) -> list[list[str]]:
    return list(
        Webhook.objects.filter(project_id=project_id, active=True).values_list("events", flat=True)
    )


def hire_event(hire: Hire, event: str, **counts: Any) -> None:
    """hire.finished or hire.screened_out: the hire's and invite's ids and the counts
    given; never the worker's id, address or answers."""
    project_id = hire.membership.project_id
    data = {"hire": hire.pk, "invite": hire.invite_id, **counts}
    emit(project_id, event, f"hire:{hire.pk}:{event}", data)


def run_finished(run: PipelineRun) -> None:
    """pipeline_run.finished (finished, failed or cancelled), with the run's counts."""
    counts = run.counts or {}
    data = {
        "run": run.pk,
        "status": run.status,
        "documents": run.total,
        "responses": int(counts.get("responses", 0)),
        "claims": int(counts.get("claims", 0)),
        "errors": run.error_count,
    }
    when = run.finished_at.timestamp() if run.finished_at else time.time()
    emit(run.project_id, "pipeline_run.finished", f"run:{run.pk}:{run.status}:{when}", data)


def import_finished(
    project_id: int,
    *,
    job_id: int | None,
    status: str,
    summary: ImportSummary | None = None,
    errors: int = 0,
) -> None:
    """import.finished: the job's id (None for an import done in the request), its status
    and counts; never the file's contents or its error texts."""
    data: dict[str, Any] = {"import_job": job_id, "status": status, "errors": errors}
    if summary is not None:
        data.update(
            documents_created=summary.documents_created,
            documents_existing=summary.documents_existing,
            documents_updated=summary.documents_updated,
            claims_created=summary.claims_created,
            verdicts_created=summary.verdicts_created,
        )
    key = f"import:{job_id}:{status}" if job_id else f"import:now:{time.time_ns()}"
    emit(project_id, "import.finished", key, data)
