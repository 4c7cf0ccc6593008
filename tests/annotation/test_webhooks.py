"""Issue 41: webhooks. Events written with the change that caused them, signed deliveries
to a real HTTP receiver on this machine, retries on a clock the test moves, redelivery,
the operator's allow-list (private addresses, DNS answers, redirects) and what a payload
may carry; who may manage hooks."""

from __future__ import annotations

import datetime as dt
import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import operations, tasks, webhooks
from annotation.hiring import Invite
from annotation.import_options import ImportOptions
from annotation.models import (
    Assignment,
    Item,
    PipelineRun,
    Project,
    Webhook,
    WebhookDelivery,
)
from tests.annotation.api_helpers import submit_body, token_client
from tests.annotation.test_hiring import RIGHT, answer, hire_of, join

__all__ = ["invite"]
from tests.annotation.test_hiring import invite  # noqa: E402  (the fixture)


class Receiver:
    """A real HTTP server on 127.0.0.1: records each request, answers with the next
    queued (status, headers), 200 when none is queued."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: deque[tuple[int, dict[str, str]]] = deque()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                status, headers = receiver.answers.popleft() if receiver.answers else (200, {})
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/in"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    r = Receiver()
    settings.WEBHOOK_ALLOWED_TARGETS = [f"http://127.0.0.1:{r.port}/hooks/"]
    settings.WEBHOOK_BACKOFF_SECONDS = 30
    settings.WEBHOOK_ATTEMPTS = 3
    yield r
    r.close()


def hook(project: Project, url: str, *events: str) -> Webhook:
    return Webhook.objects.create(project=project, url=url, events=list(events or Webhook.EVENTS))


def api_submit(user: User, a: Assignment) -> None:
    r = token_client(user).post(
        reverse("api_assignment_submit", args=[a.pk]), submit_body(), format="json"
    )
    assert r.status_code == 200, r.content


T0 = dt.datetime(2026, 11, 28, 9, 0, tzinfo=dt.UTC)


def later(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def due_now(delivery_ids: list[int]) -> None:
    WebhookDelivery.objects.filter(pk__in=delivery_ids).update(next_attempt_at=T0)


def one_delivery(
    project: Project, items: list[Item], users: dict[str, User], url: str
) -> WebhookDelivery:
    """A hook on assignment.submitted, bob's first submission, its delivery due at T0."""
    hook(project, url, "assignment.submitted")
    api_submit(users["bob"], Assignment.objects.get(item=items[0], annotator=users["bob"]))
    (d,) = WebhookDelivery.objects.all()
    due_now([d.pk])
    return d


# --- signing and the replay window -----------------------------------------------------------


def test_a_delivery_is_signed_over_timestamp_and_body_and_verifies_in_the_window(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    h = hook(alpha, receiver.url, "assignment.submitted")
    a = Assignment.objects.get(item=alpha_items[0], annotator=users["bob"])
    api_submit(users["bob"], a)
    (d,) = WebhookDelivery.objects.filter(hook=h)
    due_now([d.pk])
    assert webhooks.attempt(d.pk, now=T0) == "delivered"
    (got,) = receiver.requests
    headers, body = got["headers"], got["body"]
    assert got["path"] == "/hooks/in"
    assert headers["X-Webhook-Event"] == "assignment.submitted"
    assert headers["X-Webhook-Delivery"] == str(d.pk)
    stamp = headers["X-Webhook-Timestamp"]
    assert int(stamp) == int(T0.timestamp())
    sig = headers["X-Webhook-Signature"]
    assert webhooks.verify(h.secret, body, sig, stamp, now=T0.timestamp() + 10)
    # another secret, a changed body, a changed timestamp: refused
    assert not webhooks.verify("0" * 64, body, sig, stamp, now=T0.timestamp())
    assert not webhooks.verify(
        h.secret, body.replace(b"}", b" }", 1), sig, stamp, now=T0.timestamp()
    )
    assert not webhooks.verify(h.secret, body, sig, str(int(stamp) + 1), now=T0.timestamp())
    # replayed after the window (5 minutes), or stamped in the future beyond it
    assert not webhooks.verify(h.secret, body, sig, stamp, now=T0.timestamp() + 301)
    assert not webhooks.verify(h.secret, body, sig, stamp, now=T0.timestamp() - 301)
    assert webhooks.verify(h.secret, body, sig, stamp, now=T0.timestamp() + 300)
    assert not webhooks.verify(h.secret, body, sig, "soon", now=T0.timestamp())
    payload = json.loads(body)
    assert payload["id"] == d.pk and payload["event"] == "assignment.submitted"
    assert payload["data"] == {"assignment": a.pk, "item": a.item_id}


def test_the_manuals_verification_example_accepts_a_real_delivery(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    """The Python example in docs/researchers/webhooks.md, run as written."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs/researchers/webhooks.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, "webhooks.md", "exec"), namespace)
    h = hook(alpha, receiver.url, "assignment.submitted")
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[0], annotator=users["bob"]))
    (d,) = WebhookDelivery.objects.filter(hook=h)
    now = timezone.now()
    assert webhooks.attempt(d.pk, now=now) == "delivered"
    got = receiver.requests[0]
    check = namespace["verify"]
    assert check(h.secret, got["headers"], got["body"]) is True
    assert check(h.secret, got["headers"], got["body"] + b" ") is False
    old = {**got["headers"], "X-Webhook-Timestamp": str(int(now.timestamp()) - 3600)}
    assert check(h.secret, old, got["body"]) is False


# --- events: written with the change, blinded ---------------------------------------------------


def test_submissions_tell_assignment_submitted_and_item_completed_once(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    h = hook(alpha, receiver.url)
    item = alpha_items[0]
    bob = Assignment.objects.get(item=item, annotator=users["bob"])
    carol = Assignment.objects.get(item=item, annotator=users["carol"])
    api_submit(users["bob"], bob)
    assert list(WebhookDelivery.objects.values_list("event", flat=True)) == ["assignment.submitted"]
    api_submit(users["carol"], carol)
    r = token_client(users["carol"]).post(  # an edit of the submission: nothing told again
        reverse("api_assignment_submit", args=[carol.pk]),
        {**submit_body("2"), "edit": True},
        format="json",
    )
    assert r.status_code == 200, r.content
    events = sorted(WebhookDelivery.objects.filter(hook=h).values_list("event", flat=True))
    assert events == ["assignment.submitted", "assignment.submitted", "item.completed"]
    done = WebhookDelivery.objects.get(event="item.completed")
    assert done.payload["data"] == {"item": item.pk, "annotators": 2}


def test_an_event_is_written_in_the_changes_transaction(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    hook(alpha, receiver.url)
    a = Assignment.objects.get(item=alpha_items[1], annotator=users["bob"])
    with pytest.raises(RuntimeError), transaction.atomic():
        api_submit(users["bob"], a)
        assert WebhookDelivery.objects.count() == 1
        raise RuntimeError("the request died before its commit")
    assert WebhookDelivery.objects.count() == 0
    a.refresh_from_db()
    assert a.status == Assignment.PENDING


def test_deliveries_are_handed_to_the_worker_after_the_commit(
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django_tasks_db.models import DBTaskResult

    hook(alpha, receiver.url, "assignment.submitted")
    a = Assignment.objects.get(item=alpha_items[1], annotator=users["bob"])
    with django_capture_on_commit_callbacks(execute=True):
        api_submit(users["bob"], a)
    (d,) = WebhookDelivery.objects.all()
    rows = DBTaskResult.objects.filter(task_path=webhooks.deliver.module_path)
    assert [r.args_kwargs["args"] for r in rows] == [[d.pk]]
    assert receiver.requests == []  # the request itself sends nothing


def test_payloads_carry_ids_and_counts_never_labels_or_personal_data(
    invite: Invite, users: dict[str, User], receiver: Receiver
) -> None:
    invite.screened_out_code = "SCR-OUT-9"
    invite.save()
    project = invite.project
    hook(project, receiver.url)
    done, failed = Client(), Client()
    join(done, invite, PROLIFIC_PID="zz-worker-good")
    join(failed, invite, PROLIFIC_PID="zz-worker-bad")
    for a in Assignment.objects.filter(annotator=hire_of(done).membership.user).order_by(
        "position"
    ):
        answer(done, a, choice_side="a")
    bad = Assignment.objects.filter(annotator=hire_of(failed).membership.user)
    answer(failed, bad.get(item__quality__isnull=False), choice_side="b", hard="yes")
    events = {d.event: d.payload["data"] for d in WebhookDelivery.objects.all()}
    good, out = hire_of(done), hire_of(failed)
    assert events["hire.finished"] == {
        "hire": good.pk,
        "invite": invite.pk,
        "items": 2,
        "training": 1,
    }
    assert events["hire.screened_out"] == {
        "hire": out.pk,
        "invite": invite.pk,
        "reason": "training",
    }
    assert WebhookDelivery.objects.filter(event="hire.screened_out").count() == 1
    text = json.dumps([d.payload for d in WebhookDelivery.objects.all()])
    for secret in ("zz-worker", RIGHT["justification"], users["bob"].username, "SCR-OUT"):
        assert secret not in text
    # what a delivery sends is the stored payload, nothing more
    for d in WebhookDelivery.objects.all():
        assert set(d.payload) == {"id", "event", "created", "project", "data"}
        assert all(isinstance(v, (int, str)) or v is None for v in d.payload["data"].values())
        assert not {"answers", "label", "value", "choice", "worker_id"} & set(d.payload["data"])


def test_pipeline_runs_and_imports_tell_when_they_finish(
    alpha: Project, users: dict[str, User], receiver: Receiver
) -> None:
    hook(alpha, receiver.url, "pipeline_run.finished", "import.finished")
    run = tasks.replay_run(project=alpha, results=[], config={"model": "m"})
    assert run.status == PipelineRun.FINISHED
    text = "\n".join(json.dumps({"id": f"w{i}", "response": f"R {i}."}) for i in range(3))
    operations.import_data(project=alpha, user=users["alice"], options=ImportOptions(), text=text)
    told = {d.event: d.payload["data"] for d in WebhookDelivery.objects.all()}
    assert told["pipeline_run.finished"] == {
        "run": run.pk,
        "status": "finished",
        "documents": 0,
        "responses": 0,
        "claims": 0,
        "errors": 0,
    }
    assert told["import.finished"]["import_job"] is None
    assert told["import.finished"]["documents_created"] == 3
    assert told["import.finished"]["status"] == "finished"


def test_a_hook_only_hears_the_events_it_asked_for_and_its_own_project(
    alpha: Project,
    beta: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    receiver: Receiver,
) -> None:
    hook(alpha, receiver.url, "hire.finished")
    hook(beta, receiver.url)
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[0], annotator=users["bob"]))
    assert WebhookDelivery.objects.count() == 0


# --- retries, backoff, a killed worker, redelivery ---------------------------------------------


def test_failures_are_retried_with_backoff_then_fail(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    d = one_delivery(alpha, alpha_items, users, receiver.url)
    receiver.answers.extend([(500, {}), (503, {}), (200, {})])
    assert webhooks.attempt(d.pk, now=T0) == "pending"
    d.refresh_from_db()
    assert d.next_attempt_at == later(30) and d.response_code == 500
    assert webhooks.attempt(d.pk, now=later(29)) == "not due"
    assert webhooks.attempt(d.pk, now=later(30)) == "pending"
    d.refresh_from_db()
    assert d.next_attempt_at == later(90)  # 30 s, then 60 s
    assert webhooks.attempt(d.pk, now=later(90)) == "delivered"
    d.refresh_from_db()
    assert (d.status, d.attempts, d.response_code) == ("delivered", 3, 200)
    assert [e["code"] for e in d.log] == [500, 503, 200]
    assert len(receiver.requests) == 3
    # the same delivery id on every attempt: a receiver's dedupe key
    assert {r["headers"]["X-Webhook-Delivery"] for r in receiver.requests} == {str(d.pk)}
    assert webhooks.attempt(d.pk, now=later(10_000)) == "not due"  # delivered: never again

    # out of attempts (WEBHOOK_ATTEMPTS = 3): failed
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[1], annotator=users["bob"]))
    e = WebhookDelivery.objects.exclude(pk=d.pk).get()
    due_now([e.pk])
    receiver.answers.extend([(500, {})] * 3)
    assert [webhooks.attempt(e.pk, now=later(s)) for s in (0, 30, 90)] == [
        "pending",
        "pending",
        "failed",
    ]


def test_a_redirect_is_not_followed(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    d = one_delivery(alpha, alpha_items, users, receiver.url)
    receiver.answers.append((302, {"Location": f"http://127.0.0.1:{receiver.port}/hooks/other"}))
    assert webhooks.attempt(d.pk, now=T0) == "pending"
    d.refresh_from_db()
    assert "not followed" in d.log[-1]["error"] and d.response_code == 302
    assert [r["path"] for r in receiver.requests] == ["/hooks/in"]


def test_a_worker_killed_mid_delivery_leaves_it_to_the_sweep(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    d = one_delivery(alpha, alpha_items, users, receiver.url)
    assert webhooks._claim(d.pk, T0) is not None  # claimed, then the worker died
    assert webhooks.attempt(d.pk, now=later(1)) == "not due"  # its claim still holds
    assert webhooks.requeue_due(alpha.pk, now=later(1)) == 0
    # a delivery due a moment ago has its task queued still: not enqueued again
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[1], annotator=users["bob"]))
    fresh = WebhookDelivery.objects.exclude(pk=d.pk).get()
    fresh.next_attempt_at = later(3590)
    fresh.save()
    assert webhooks.requeue_due(alpha.pk, now=later(3600)) == 1  # the killed one only
    fresh.next_attempt_at = T0
    fresh.save()
    assert webhooks.requeue_due(alpha.pk, now=later(3600)) == 2  # both, now overdue
    assert webhooks.attempt(d.pk, now=later(3600)) == "delivered"
    assert len(receiver.requests) == 1


def test_a_delivery_can_be_sent_again_from_the_page_and_the_api(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], receiver: Receiver
) -> None:
    d = one_delivery(alpha, alpha_items, users, receiver.url)
    h = d.hook
    assert webhooks.attempt(d.pk, now=T0) == "delivered"
    alice = Client()
    alice.force_login(users["alice"])
    page = reverse("webhook", args=[alpha.pk, h.pk])
    r = alice.post(page, {"action": "redeliver", "delivery": str(d.pk)})
    assert r.status_code == 302
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("pending", 0)
    assert webhooks.attempt(d.pk, now=timezone.now()) == "delivered"
    api = token_client(users["alice"])
    url = reverse("api_webhook_redeliver", args=[alpha.pk, h.pk, d.pk])
    assert api.post(url).json()["status"] == "pending"
    assert webhooks.attempt(d.pk, now=timezone.now()) == "delivered"
    assert len(receiver.requests) == 3
    assert len({r["body"] for r in receiver.requests}) == 1  # the same event, the same body
    listing = api.get(reverse("api_webhook_deliveries", args=[alpha.pk, h.pk])).json()
    assert listing["count"] == 1 and listing["results"][0]["log"][-1]["code"] == 200
    assert str(d.pk) in alice.get(page).content.decode()
    assert alice.post(page, {"action": "redeliver", "delivery": "x1"}).status_code == 404


# --- targets: the operator's list, private addresses, DNS ---------------------------------------


def fake_dns(monkeypatch: Any, answers: dict[str, str]) -> None:
    """The outside world's DNS: names resolve to the addresses given."""
    real = socket.getaddrinfo

    def lookup(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            family = socket.AF_INET6 if ":" in answers[host] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)


@pytest.mark.parametrize(
    ("allowed", "url", "why"),
    [
        ([], "https://hooks.example.org/x", "allows no webhook targets"),
        (["hooks.example.org"], "https://other.example.org/x", "not among"),
        (["hooks.example.org"], "https://hooks.example.org.evil.test/x", "not among"),
        (["https://hooks.example.org/lab/"], "https://hooks.example.org/other", "not among"),
        (["https://hooks.example.org/lab/"], "http://hooks.example.org/lab/x", "not among"),
        (["hooks.example.org"], "ftp://hooks.example.org/x", "only http"),
        (["hooks.example.org"], "https://u:p@hooks.example.org/x", "user name"),
        (["hooks.example.org"], "https:///x", "no host"),
        (["hooks.example.org"], "http://hooks.example.org:99999/", "not a URL"),
    ],
)
def test_unlisted_targets_are_refused(
    settings: Any, monkeypatch: Any, allowed: list[str], url: str, why: str
) -> None:
    settings.WEBHOOK_ALLOWED_TARGETS = allowed
    fake_dns(monkeypatch, {"hooks.example.org": "93.184.216.34"})
    with pytest.raises(webhooks.Refused, match=why):
        webhooks.resolve(url)


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1", "fd00::1", "0.0.0.0"],
)
def test_private_loopback_and_link_local_addresses_are_refused_unless_listed(
    settings: Any, monkeypatch: Any, address: str
) -> None:
    settings.WEBHOOK_ALLOWED_TARGETS = ["hooks.example.org"]
    fake_dns(monkeypatch, {"hooks.example.org": address})
    with pytest.raises(webhooks.Refused, match="private, loopback or link-local"):
        webhooks.resolve("https://hooks.example.org/x")
    net = "::/0" if ":" in address else "0.0.0.0/0"
    settings.WEBHOOK_ALLOWED_TARGETS = ["hooks.example.org", net]  # the operator lists it
    assert str(webhooks.resolve("https://hooks.example.org/x").address) == address


def test_an_address_literal_is_allowed_only_when_it_is_listed(settings: Any) -> None:
    settings.WEBHOOK_ALLOWED_TARGETS = ["http://127.0.0.1:8123/hooks/"]
    assert str(webhooks.resolve("http://127.0.0.1:8123/hooks/a").address) == "127.0.0.1"
    settings.WEBHOOK_ALLOWED_TARGETS = ["http://localhost:8123/hooks/"]
    with pytest.raises(webhooks.Refused, match="loopback"):  # a name for it is not enough
        webhooks.resolve("http://localhost:8123/hooks/a")


def test_dns_rebinding_cannot_reach_a_private_address(
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    receiver: Receiver,
    settings: Any,
    monkeypatch: Any,
) -> None:
    """The name was public when the hook was added; at delivery time it resolves to the
    loopback address: refused, nothing sent, no retry."""
    settings.WEBHOOK_ALLOWED_TARGETS = ["hooks.example.org"]
    fake_dns(monkeypatch, {"hooks.example.org": "93.184.216.34"})
    assert webhooks.check_url(f"http://hooks.example.org:{receiver.port}/hooks/in") is None
    hook(alpha, f"http://hooks.example.org:{receiver.port}/hooks/in", "assignment.submitted")
    fake_dns(monkeypatch, {"hooks.example.org": "127.0.0.1"})
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[0], annotator=users["bob"]))
    (d,) = WebhookDelivery.objects.all()
    due_now([d.pk])
    assert webhooks.attempt(d.pk, now=T0) == "failed"
    d.refresh_from_db()
    assert "refused" in d.log[-1]["error"] and receiver.requests == []


def test_the_connection_goes_to_the_checked_address_with_the_urls_host(
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    receiver: Receiver,
    settings: Any,
    monkeypatch: Any,
) -> None:
    settings.WEBHOOK_ALLOWED_TARGETS = ["hooks.example.org", "127.0.0.1"]
    fake_dns(monkeypatch, {"hooks.example.org": "127.0.0.1"})
    hook(alpha, f"http://hooks.example.org:{receiver.port}/hooks/in", "assignment.submitted")
    api_submit(users["bob"], Assignment.objects.get(item=alpha_items[0], annotator=users["bob"]))
    (d,) = WebhookDelivery.objects.all()
    due_now([d.pk])
    assert webhooks.attempt(d.pk, now=T0) == "delivered"
    assert receiver.requests[0]["headers"]["Host"] == f"hooks.example.org:{receiver.port}"


def test_the_form_and_the_api_refuse_an_unlisted_url(
    alpha: Project, users: dict[str, User], receiver: Receiver
) -> None:
    alice = Client()
    alice.force_login(users["alice"])
    r = alice.post(
        reverse("webhooks", args=[alpha.pk]),
        {"url": "http://169.254.169.254/latest/", "events": ["hire.finished"]},
    )
    assert r.status_code == 200 and b"not among the targets" in r.content
    api = token_client(users["alice"])
    body = {"url": "http://127.0.0.1:1/x", "events": ["hire.finished"]}
    r = api.post(reverse("api_webhooks", args=[alpha.pk]), body, format="json")
    assert r.status_code == 400 and r.json()["field"] == "url"
    body = {"url": receiver.url, "events": ["no.such"]}
    assert (
        api.post(reverse("api_webhooks", args=[alpha.pk]), body, format="json").status_code == 400
    )
    assert Webhook.objects.count() == 0
    body = {"url": receiver.url, "events": ["hire.finished", "item.completed"]}
    r = api.post(reverse("api_webhooks", args=[alpha.pk]), body, format="json")
    assert r.status_code == 201 and len(r.json()["secret"]) == 64
    r = alice.post(
        reverse("webhooks", args=[alpha.pk]), {"url": receiver.url, "events": ["import.finished"]}
    )
    assert r.status_code == 302 and Webhook.objects.count() == 2


# --- who may manage hooks ----------------------------------------------------------------------


def test_only_the_projects_researchers_see_or_manage_its_hooks(
    invite: Invite, users: dict[str, User], receiver: Receiver
) -> None:
    alpha = invite.project
    h = hook(alpha, receiver.url)
    worker = Client()
    join(worker, invite, PROLIFIC_PID="w-1")
    hired = hire_of(worker).membership.user
    pages = [reverse("webhooks", args=[alpha.pk]), reverse("webhook", args=[alpha.pk, h.pk])]
    apis = [
        reverse("api_webhooks", args=[alpha.pk]),
        reverse("api_webhook", args=[alpha.pk, h.pk]),
        reverse("api_webhook_deliveries", args=[alpha.pk, h.pk]),
    ]
    for who in (users["bob"], users["erin"], hired):  # annotator, other project's researcher, hire
        c = Client()
        c.force_login(who)
        for url in pages:
            assert c.get(url).status_code == 404, (who, url)
            assert c.post(url, {"action": "delete"}).status_code == 404
        api = token_client(who)
        for url in apis:
            assert api.get(url).status_code == 404, (who, url)
        assert api.delete(apis[1]).status_code == 404
        body = {"url": receiver.url, "events": ["hire.finished"]}
        assert api.post(apis[0], body, format="json").status_code == 404
    assert Client().get(pages[0]).status_code == 302  # to the login page
    assert token_client(None).get(apis[0]).status_code == 401
    alice = token_client(users["alice"])
    assert h.secret in alice.get(apis[1]).content.decode()
    assert alice.delete(apis[1]).status_code == 204
    assert not Webhook.objects.exists()
