"""Issue 18: invite links, training items, known-answer checks (pages and API)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation import exports, hiring
from annotation.gold import gold_values, label_rows
from annotation.hiring import Hire, HiringPolicy, Invite
from annotation.models import Answer, Assignment, Item, Project
from tests.annotation.api_helpers import token_client

RIGHT = {"choice": "1", "hard": "no", "justification": "The first list covers every fact."}


@pytest.fixture
def invite(alpha: Project, alpha_items: list[Item], users: dict[str, User]) -> Invite:
    """Item 0 is a training item (reference: storage side "a", not hard); the link gives
    two real items to each person who joins."""
    hiring.mark(
        alpha_items[0],
        hiring.TRAINING,
        {"item.choice": "a", "item.hard": "no"},
        "List a names every fact.",
    )
    alpha.set_instructions(alpha.instructions)  # unchanged: version 1
    return Invite.objects.create(
        project=alpha,
        created_by=users["alice"],
        items_per_person=2,
        completion_code="C0DE-42",
        extra_params=["STUDY_ID"],
    )


def set_policy(project: Project, **values: object) -> None:
    HiringPolicy.of(project)
    HiringPolicy.objects.filter(project=project).update(**values)


def join(client: Client, invite: Invite, **params: str) -> str:
    """Open the link, press Start; returns the page that follows."""
    url = reverse("join", args=[invite.key])
    assert client.get(url, params).status_code == 200
    r = client.post(url, params, follow=True)
    return r.content.decode()


def hire_of(client: Client) -> Hire:
    return Hire.objects.get(membership__user_id=int(client.session["_auth_user_id"]))


def answer(client: Client, a: Assignment, choice_side: str | None = None, **values: str):  # type: ignore[no-untyped-def]
    """Submit on the page; `choice_side` ("a"/"b") picks the list number this person saw."""
    data = {**RIGHT, **values}
    if choice_side:
        data["choice"] = hiring.presented(a, "choice", choice_side)
    client.post(reverse("instructions", args=[a.item.project_id]))  # acknowledge
    return client.post(reverse("assignment", args=[a.pk]), data)


# --- invite links ----------------------------------------------------------------------


def test_a_worker_id_alone_never_opens_an_account(invite: Invite, client: Client) -> None:
    """Issue 25, attack 1: the invite key and a worker id (not secrets) opened the
    account; now a second join with the id, padded or not, opens nothing."""
    page = join(client, invite, PROLIFIC_PID="w-123", STUDY_ID="s1")
    assert "personal link" in page
    first = hire_of(client)
    assert first.worker_id == "w-123" and first.worker_params == {"STUDY_ID": "s1"}
    assert first.membership.user.has_usable_password() is False
    url = reverse("join", args=[invite.key])
    for worker in ("w-123", " w-123 ", "w-123\n"):
        attacker = Client()
        r = attacker.post(url, {"PROLIFIC_PID": worker})
        assert r.status_code in (400, 409), worker
        assert "_auth_user_id" not in attacker.session
        assert b"w-123" not in r.content or worker == "w-123"
    r = Client().post(url, {"PROLIFIC_PID": "w-123"})
    assert b"personal link" in r.content and r.status_code == 409  # told how to come back
    # the browser that joined opens the link again: back to its own work
    assert client.get(url, {"PROLIFIC_PID": "w-123"})["Location"] == reverse(
        "next_item", args=[invite.project_id]
    )
    other = Client()
    join(other, invite, PROLIFIC_PID="w-456")
    assert hire_of(other).pk != first.pk and Hire.objects.count() == 2


@pytest.mark.parametrize(
    "worker",
    ["", " ", "x" * 129, "a b", "w-1;drop", "é", "w-1 ", "<script>", "a/b", "-A1", ".x"],
)
def test_empty_and_junk_worker_ids_make_no_account(invite: Invite, worker: str) -> None:
    r = Client().post(reverse("join", args=[invite.key]), {"PROLIFIC_PID": worker})
    assert r.status_code == 400 and b'id="problem"' in r.content
    assert Client().post(reverse("join", args=[invite.key])).status_code == 400
    api = token_client(None)
    for body in ({"PROLIFIC_PID": worker}, {"PROLIFIC_PID": {"a": 1}}, {"PROLIFIC_PID": 7}, []):
        r = api.post(reverse("api_join", args=[invite.key]), body, format="json")
        assert r.status_code == 400 and r.json()["code"] == "invalid", body
    assert Hire.objects.count() == 0
    assert join(Client(), invite, PROLIFIC_PID="x" * 128)  # the longest id is fine
    assert Hire.objects.get().worker_id == "x" * 128


def test_an_invite_without_a_worker_parameter_makes_an_account_per_start(
    alpha: Project, alpha_items: list[Item]
) -> None:
    invite = Invite.objects.create(project=alpha, worker_param="", items_per_person=1)
    join(Client(), invite)
    join(Client(), invite, PROLIFIC_PID="ignored")
    assert list(Hire.objects.values_list("worker_id", flat=True)) == ["", ""]


def test_joins_are_throttled_per_address_and_per_invite(invite: Invite, settings: object) -> None:
    """Issue 25, attack 4: a join flood gets 429 with Retry-After, page and API alike."""
    settings.JOIN_RATE_PER_ADDRESS = "3/minute"  # type: ignore[attr-defined]
    settings.JOIN_RATE_PER_INVITE = "5/hour"  # type: ignore[attr-defined]
    url = reverse("join", args=[invite.key])
    statuses = [Client().post(url, {"PROLIFIC_PID": f"w-{i}"}).status_code for i in range(4)]
    assert statuses == [200, 200, 200, 429]
    r = token_client(None).post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "w-9"}, format="json"
    )
    assert r.status_code == 429 and 0 < int(r["Retry-After"]) <= 60
    # another address: the invite's own limit (5 an hour) still holds
    other = [
        Client(REMOTE_ADDR="10.0.0.2").post(url, {"PROLIFIC_PID": f"v-{i}"}).status_code
        for i in range(3)
    ]
    assert other == [200, 200, 429]
    assert int(Client(REMOTE_ADDR="10.0.0.3").post(url, {})["Retry-After"]) > 60
    assert Hire.objects.count() == 5


def test_cap_expiry_and_revocation_close_the_link(invite: Invite) -> None:
    invite.cap = 1
    invite.save()
    join(Client(), invite, PROLIFIC_PID="w-1")
    full = Client().post(reverse("join", args=[invite.key]), {"PROLIFIC_PID": "w-2"})
    assert full.status_code == 410 and b"full" in full.content
    invite.cap = None
    invite.expires_at = timezone.now() - dt.timedelta(seconds=1)
    invite.save()
    assert Client().get(reverse("join", args=[invite.key])).status_code == 410
    invite.expires_at = None
    invite.revoked = True
    invite.save()
    r = Client().post(reverse("join", args=[invite.key]), {"PROLIFIC_PID": "w-3"})
    assert r.status_code == 410 and b"revoked" in r.content
    assert (
        Client().post(reverse("join", args=[invite.key]), {"PROLIFIC_PID": "w-1"}).status_code
        == 410
    )
    assert Hire.objects.count() == 1


def test_worker_ids_are_shown_to_the_researcher_only(
    invite: Invite, client: Client, users: dict[str, User]
) -> None:
    join(client, invite, PROLIFIC_PID="zz-worker-77")
    alice = Client()
    alice.force_login(users["alice"])
    assert b"zz-worker-77" in alice.get(reverse("hiring", args=[invite.project_id])).content
    bob = Client()
    bob.force_login(users["bob"])
    for url in (reverse("home"), reverse("queue", args=[invite.project_id])):
        assert b"zz-worker-77" not in bob.get(url).content
    assert bob.get(reverse("hiring", args=[invite.project_id])).status_code == 404
    assert b"zz-worker-77" not in client.get(reverse("queue", args=[invite.project_id])).content


# --- training ----------------------------------------------------------------------------


def test_training_first_then_feedback_then_the_real_queue(invite: Invite, client: Client) -> None:
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    mine = Assignment.objects.filter(annotator=hire.membership.user)
    training = mine.get(item__quality__role=hiring.TRAINING)
    real = mine.exclude(pk=training.pk).first()
    assert mine.count() == 3 and training.position == 0
    client.post(reverse("instructions", args=[invite.project_id]))
    # a real item is not reachable before training is passed
    assert client.get(reverse("assignment", args=[real.pk]))["Location"] == reverse(
        "next_item", args=[invite.project_id]
    )
    assert client.get(reverse("next_item", args=[invite.project_id]))["Location"] == reverse(
        "assignment", args=[training.pk]
    )
    r = answer(client, training, choice_side="a")
    assert r["Location"] == reverse("training_feedback", args=[training.pk])
    feedback = client.get(r["Location"]).content.decode()
    seen = hiring.presented(training, "choice", "a")  # List a as this person numbered it
    assert f"List {seen} names every fact." in feedback and 'class="different"' not in feedback
    assert feedback.count("✓ right") == 2 and "✗ wrong" not in feedback
    hire.refresh_from_db()
    assert hire.passed_training
    nxt = client.get(reverse("next_item", args=[invite.project_id]))["Location"]
    assert nxt == reverse("assignment", args=[mine.open().first().pk])


def test_below_the_pass_mark_waits_until_a_researcher_lets_them_through(
    invite: Invite, client: Client, users: dict[str, User]
) -> None:
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    training = Assignment.objects.get(annotator=hire.membership.user, item__quality__isnull=False)
    feedback = client.get(answer(client, training, choice_side="b", hard="yes")["Location"])
    assert feedback.content.decode().count('class="different"') == 2
    assert feedback.content.decode().count("✗ wrong") == 2
    wait = client.get(reverse("next_item", args=[invite.project_id]))
    assert wait.status_code == 200 and b'id="wait"' in wait.content
    alice = Client()
    alice.force_login(users["alice"])
    hiring_page = reverse("hiring", args=[invite.project_id])
    assert "<td>failed training</td>" in alice.get(hiring_page).content.decode()
    let_through = alice.post(
        reverse("hiring_member", args=[invite.project_id, hire.membership_id]),
        {"action": "let_through"},
        follow=True,
    )
    shown = let_through.content.decode()
    assert f"{hire.membership.pseudonym} let past training: real items open." in shown
    assert "done." not in shown  # it said "A4: let through done."
    assert "<td>failed training</td>" not in alice.get(hiring_page).content.decode()
    r = client.get(reverse("next_item", args=[invite.project_id]))
    assert r.status_code == 302 and "/a/" in r["Location"]


def test_training_answers_never_enter_agreement_or_gold(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    for user in (users["bob"], users["carol"]):
        for item in alpha_items:
            Assignment.objects.get(item=item, annotator=user).submit(
                {("item", "choice"): "1", ("item", "hard"): "no"}, guideline_version=1
            )
    before = {r.item for r in label_rows(alpha)}
    assert alpha_items[0].pk in before
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a"})
    hiring.mark(alpha_items[1], hiring.CHECK, {"item.hard": "no"})
    assert {r.item for r in label_rows(alpha)} == before - {alpha_items[0].pk, alpha_items[1].pk}
    assert {g.item for g in gold_values(alpha)} == before - {alpha_items[0].pk, alpha_items[1].pk}
    rows = {r["annotator"]: r for r in hiring.quality_rows(alpha)}
    assert rows["A1"]["training_items"] == 1 and rows["A1"]["checks"] == 1
    # the long export lists them, marked, without a gold value
    role = {alpha_items[0].pk: hiring.TRAINING, alpha_items[1].pk: hiring.CHECK}
    long = exports.long_rows(alpha)
    assert {r["item"] for r in long} == {i.pk for i in alpha_items}
    for r in long:
        assert r["item_role"] == role.get(r["item"], "")
        assert r["gold"] is None or r["item"] not in role
    assert any(r["gold"] for r in long if r["item"] not in role)


def test_marking_rejects_values_outside_the_fields(alpha_items: list[Item]) -> None:
    with pytest.raises(ValueError, match="not one of"):
        hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "1"})
    with pytest.raises(ValueError, match="not a categorical field"):
        hiring.mark(alpha_items[0], hiring.TRAINING, {"item.justification": "x"})
    with pytest.raises(ValueError, match="adjudicate"):
        hiring.mark(alpha_items[0], hiring.CHECK, {})


# --- known-answer checks -------------------------------------------------------------------


def _page(client: Client, a: Assignment) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        body = client.get(reverse("assignment", args=[a.pk])).content.decode()
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)
    body = re.sub(r'"x-csrftoken": "[^"]+"', "", body)
    body = re.sub(r'data-page="[0-9a-f]+"', "", body)  # the page instance's random token
    return body.replace(f"/a/{a.pk}/", "/a/ID/"), len(queries)


def test_a_check_item_is_indistinguishable_in_page_and_queries(
    invite: Invite, client: Client, alpha_items: list[Item]
) -> None:
    set_policy(invite.project, check_rate=0.5)
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    hiring.set_state(hire.membership, let_through=True)
    client.post(reverse("instructions", args=[invite.project_id]))
    a = Assignment.objects.filter(
        annotator=hire.membership.user, item__quality__isnull=True
    ).first()
    _page(client, a)  # the first opening starts the assignment: compare later openings
    page, n_queries = _page(client, a)
    hiring.mark(a.item, hiring.CHECK, {"item.choice": "a"})
    as_check, n_check = _page(client, a)
    assert as_check == page and n_check == n_queries
    api = token_client(hire.membership.user)
    api.post(reverse("api_acknowledge", args=[invite.project_id]))
    detail = api.get(reverse("api_assignment", args=[a.pk])).json()
    hiring.QualityItem.objects.filter(item=a.item).delete()
    assert api.get(reverse("api_assignment", args=[a.pk])).json() == detail


def test_checks_are_mixed_in_at_the_policy_rate(invite: Invite, alpha_items: list[Item]) -> None:
    hiring.mark(alpha_items[3], hiring.CHECK, {"item.choice": "b"})
    set_policy(invite.project, check_rate=1 / 3)
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    mine = Assignment.objects.filter(annotator=hire_of(client).membership.user)
    roles = sorted(str(role) for role in mine.values_list("item__quality__role", flat=True))
    assert roles == ["None", "None", "check", "training"]


def test_check_accuracy_pauses_automatically(invite: Invite, alpha_items: list[Item]) -> None:
    for item in alpha_items[2:]:
        hiring.mark(item, hiring.CHECK, {"item.hard": "no"})
    set_policy(invite.project, check_rate=0.5, pause_below=0.5, pause_after=2)
    invite.items_per_person = 1
    invite.save()
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    hiring.set_state(hire.membership, let_through=True)
    checks = Assignment.objects.filter(
        annotator=hire.membership.user, item__quality__role=hiring.CHECK
    )
    assert checks.count() == 1  # one real item, one check at 50%
    Assignment.objects.create(
        item=alpha_items[3] if checks[0].item != alpha_items[3] else alpha_items[2],
        annotator=hire.membership.user,
        position=9,
    )
    for a in checks.all():
        answer(client, a, hard="yes")
    hire.refresh_from_db()
    assert (
        hire.paused and hiring.score(hire.membership.user, invite.project, hiring.CHECK).units == 2
    )
    page = client.get(reverse("next_item", args=[invite.project_id]))
    assert b'id="wait"' in page.content and b"paused" in page.content


def test_wilson_interval_matches_newcombe_1998() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (score)
    for (n, k), (low, high) in {
        (263, 81): (0.2553, 0.3662),
        (148, 15): (0.0624, 0.1605),
        (20, 0): (0.0, 0.1611),
        (29, 1): (0.0061, 0.1718),
    }.items():
        ci = hiring.Score(n, k).wilson()
        assert ci is not None and round(ci[0], 4) == low and round(ci[1], 4) == high


def test_a_researcher_pauses_from_the_page(invite: Invite, users: dict[str, User]) -> None:
    bob_m = invite.project.memberships.get(user=users["bob"])
    bob = Client()
    bob.force_login(users["bob"])
    url = reverse("hiring_member", args=[invite.project_id, bob_m.pk])
    assert bob.post(url, {"action": "pause"}).status_code == 404
    alice = Client()
    alice.force_login(users["alice"])
    alice.post(url, {"action": "pause"})
    r = bob.get(reverse("next_item", args=[invite.project_id]))
    assert b"paused" in r.content
    open_one = Assignment.objects.filter(annotator=users["bob"]).open().first()
    assert bob.get(reverse("assignment", args=[open_one.pk])).status_code == 302
    alice.post(url, {"action": "resume"})
    assert bob.get(reverse("assignment", args=[open_one.pk])).status_code == 200


# --- completion ----------------------------------------------------------------------------


def test_a_finished_queue_shows_the_completion_code_or_redirects(invite: Invite) -> None:
    # no items yet: no code for no work
    gamma = Project.objects.create(name="gamma")
    empty = Client()
    join(empty, Invite.objects.create(project=gamma, completion_code="FREE"), PROLIFIC_PID="e-1")
    assert hire_of(empty).passed_training  # no training items: straight through
    empty.post(reverse("instructions", args=[gamma.pk]))
    r = empty.get(reverse("next_item", args=[gamma.pk]), follow=True)
    assert b"FREE" not in r.content and b"Nothing is assigned to you yet" in r.content
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    mine = Assignment.objects.filter(annotator=hire_of(client).membership.user)
    for a in mine.order_by("position"):
        answer(client, a, choice_side="a")
    done = client.get(reverse("next_item", args=[invite.project_id]))
    assert b'id="completion-code">C0DE-42<' in done.content
    invite.completion_url = "https://app.prolific.com/submissions/complete?cc=C0DE"
    invite.save()
    r = client.get(reverse("next_item", args=[invite.project_id]))
    assert r.status_code == 302 and r["Location"] == invite.completion_url


# --- API -----------------------------------------------------------------------------------


def test_api_invites_join_revoke_and_quality(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    alice = token_client(users["alice"])
    r = alice.post(
        reverse("api_invites", args=[alpha.pk]),
        {"note": "pilot", "cap": 2, "items_per_person": 1, "completion_code": "X"},
        format="json",
    )
    assert r.status_code == 201, r.json()
    invite = Invite.objects.get(pk=r.json()["id"])
    anon = token_client(None)
    first = anon.post(reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p1"}, format="json")
    assert first.status_code == 201 and first.json()["personal_url"]
    for worker in ("p1", " p1", "p1 "):  # attack 1 through the API: no token for an id
        again = anon.post(
            reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": worker}, format="json"
        )
        assert again.status_code in (400, 409) and "token" not in again.json()
    assert again.status_code == 400
    assert (
        anon.post(
            reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p1"}, format="json"
        ).json()["code"]
        == "already_joined"
    )
    worker = token_client(User.objects.get(auth_token__key=first.json()["token"]))
    assert worker.get(reverse("api_quality", args=[alpha.pk])).status_code == 404
    assert worker.get(reverse("api_invites", args=[alpha.pk])).status_code == 404
    rows = alice.get(reverse("api_quality", args=[alpha.pk])).json()
    assert [r["worker_id"] for r in rows if r["hired"]] == ["p1"]
    assert alice.post(reverse("api_invite_revoke", args=[alpha.pk, invite.pk])).json()["revoked"]
    closed = anon.post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p2"}, format="json"
    )
    assert closed.status_code == 410 and closed.json()["code"] == "invite_closed"


def test_api_training_and_policy(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    alice = token_client(users["alice"])
    r = alice.post(
        reverse("api_quality_items", args=[alpha.pk]),
        {
            "item": alpha_items[0].pk,
            "role": "training",
            "reference": {"item.choice": "a"},
            "explanation": "Because.",
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    bad = alice.post(
        reverse("api_quality_items", args=[alpha.pk]),
        {"item": alpha_items[1].pk, "role": "check", "reference": {"item.hard": "maybe"}},
        format="json",
    )
    assert bad.status_code == 400 and "maybe" in bad.json()["message"]
    r = alice.put(
        reverse("api_hiring_policy", args=[alpha.pk]),
        {"pass_mark": 2, "check_rate": 0.1, "pause_below": None, "pause_after": 3},
        format="json",
    )
    assert r.status_code == 400 and r.json()["field"] == "pass_mark"
    invite = Invite.objects.create(project=alpha, items_per_person=1)
    joined = (
        token_client(None)
        .post(reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p1"}, format="json")
        .json()
    )
    worker = token_client(User.objects.get(auth_token__key=joined["token"]))
    worker.post(reverse("api_acknowledge", args=[alpha.pk]))
    queue = worker.get(reverse("api_assignments")).json()["results"]
    training, real = queue[0]["id"], queue[1]["id"]
    assert worker.get(reverse("api_assignment", args=[real])).json()["code"] == "hiring_training"
    a = Assignment.objects.get(pk=training)
    body = {
        "answers": [
            {"unit": "item", "field": "choice", "value": hiring.presented(a, "choice", "a")},
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": "It covers all facts."},
        ]
    }
    assert (
        worker.post(
            reverse("api_assignment_submit", args=[training]), body, format="json"
        ).status_code
        == 200
    )
    fb = worker.get(reverse("api_assignment_feedback", args=[training])).json()
    assert fb["explanation"] == "Because."
    assert fb["reference"] == {"item.choice": hiring.presented(a, "choice", "a")}
    assert fb["right"] == {"item.choice": True}
    assert worker.get(reverse("api_assignment", args=[real])).status_code == 200


def test_the_report_has_a_quality_section_and_nothing_else_sees_training(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    from annotation.exports import wide_rows
    from annotation.reports import build_report

    for user in (users["bob"], users["carol"]):
        for item in alpha_items:
            a = Assignment.objects.get(item=item, annotator=user)
            a.submit(
                {
                    ("item", "choice"): hiring.presented(a, "choice", "a"),
                    ("item", "hard"): "no" if user == users["bob"] else "yes",
                },
                guideline_version=1,
            )
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a", "item.hard": "no"})
    hiring.mark(alpha_items[1], hiring.CHECK, {"item.hard": "no"})
    report = build_report(alpha, bootstrap=0, with_charts=False)
    section = report.section("quality")
    assert section is not None
    assert section.tables[0].rows == (("A1", 1, 2, 1.0), ("A2", 1, 2, 0.5))
    checks = section.tables[1].rows
    assert [r[:4] for r in checks] == [("A1", 1, 1, 1.0), ("A2", 1, 0, 0.0)]
    assert checks[1][4] == 0.0 and round(checks[1][5], 4) == 0.7935  # Wilson, 0 of 1
    effort = report.section("effort")
    assert effort is not None and {r[2] for r in effort.tables[0].rows} == {2}
    header, wide = wide_rows(alpha)
    shown = {row[header.index("document")] for row in wide}
    assert shown == {item.document.external_id for item in alpha_items[2:]}


def test_an_import_field_marks_training_items(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    from annotation.ingest import import_file
    from annotation.models import System
    from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line

    training = {
        "comparison": {
            "role": "training",
            "reference": {"item.choice": "a"},
            "explanation": "List A has both facts.",
        }
    }
    import_file(
        project=alpha, file="t.jsonl", text=canonical_line(9, metadata={"hiring": training})
    )
    a, b = (System.objects.get(project=alpha, name=n).pk for n in (SYSTEM_A, SYSTEM_B))
    client.force_login(users["alice"])
    url = reverse("project_items", args=[alpha.pk, "comparison"])
    client.post(url, {"system_a": a, "system_b": b, "k": 1, "fraction": 0, "seed": 0})
    marked = hiring.QualityItem.objects.get()
    assert marked.item.document.external_id == "doc-9" and marked.role == hiring.TRAINING
    assert marked.explanation == "List A has both facts." and Item.objects.count() == 5
    # a bad reference names the document and field, and nothing is made
    other = Project.objects.create(name="gamma")
    other.add_member(users["alice"], "researcher")
    other.add_member(users["bob"], "annotator")
    bad = {"comparison": {"role": "training", "reference": {"item.choice": "1"}}}
    import_file(project=other, file="t.jsonl", text=canonical_line(1, metadata={"hiring": bad}))
    a, b = (System.objects.get(project=other, name=n).pk for n in (SYSTEM_A, SYSTEM_B))
    r = client.post(
        reverse("project_items", args=[other.pk, "comparison"]),
        {"system_a": a, "system_b": b, "k": 1, "fraction": 0, "seed": 0},
        follow=True,
    )
    assert "document doc-1: metadata.hiring.comparison: item.choice" in r.content.decode()
    assert not Item.objects.filter(project=other).exists()


def test_a_check_takes_its_gold_from_a_reference_verdict_set(
    alpha: Project, alpha_verification: list[Item], users: dict[str, User]
) -> None:
    from annotation.models import System, Verdict

    item = alpha_verification[0]
    ref = System.objects.create(project=alpha, name="human-ref", kind=System.REFERENCE)
    Verdict.objects.create(system=ref, claim=item.claim, label="supported")
    alice = token_client(users["alice"])
    url = reverse("api_quality_items", args=[alpha.pk])
    r = alice.post(
        url, {"item": item.pk, "role": "check", "reference_system": "human-ref"}, format="json"
    )
    assert r.status_code == 201 and r.json()["reference"] == {"item.label": "supported"}
    r = alice.post(
        url,
        {"item": alpha_verification[1].pk, "role": "check", "reference_system": "human-ref"},
        format="json",
    )
    assert r.status_code == 400 and "no verdict" in r.json()["message"]
    bob = Assignment.objects.get(item=item, annotator=users["bob"])
    bob.submit({("item", "label"): "supported"}, guideline_version=1)
    assert hiring.score(users["bob"], alpha, hiring.CHECK) == hiring.Score(1, 1)


def test_the_hiring_page_marks_items_and_creates_invites(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["alice"])
    url = reverse("hiring", args=[alpha.pk])
    client.post(
        url,
        {
            "action": "mark",
            "item": alpha_items[0].pk,
            "role": "training",
            "reference": "item.choice=b\nitem.hard=yes",
            "explanation": "B is longer.",
        },
    )
    assert hiring.QualityItem.objects.get().reference == {"item.choice": "b", "item.hard": "yes"}
    r = client.post(
        url,
        {
            "action": "mark",
            "item": alpha_items[1].pk,
            "role": "check",
            "reference": "",
            "reference_system": "nope",
        },
        follow=True,
    )
    assert "no system" in r.content.decode()
    client.post(
        url,
        {
            "action": "invite",
            "note": "pilot",
            "cap": 3,
            "worker_param": "PROLIFIC_PID",
            "extra_params": '["STUDY_ID"]',
            "items_per_person": 2,
            "expires_in_days": 7,
            "completion_code": "Z9",
        },
    )
    invite = Invite.objects.get()
    assert invite.extra_params == ["STUDY_ID"] and invite.expires_at is not None
    page = client.get(url).content.decode()
    assert reverse("join", args=[invite.key]) in page
    client.post(url, {"action": "revoke", "invite": invite.pk})
    invite.refresh_from_db()
    assert invite.revoked
    client.post(url, {"action": "policy", "pass_mark": 1.5, "check_rate": 0.1, "pause_after": 5})
    assert HiringPolicy.of(alpha).pass_mark == 0.8  # refused: not a share


@pytest.mark.django_db(transaction=True)
def test_simultaneous_joins_give_one_account_per_worker_and_respect_the_cap(
    alpha: Project, alpha_items: list[Item]
) -> None:
    import threading

    invite = Invite.objects.create(project=alpha, cap=2, items_per_person=1)
    workers = ["same", "same", "other", "third"]
    barrier = threading.Barrier(len(workers))
    statuses: list[int] = []

    def open_link(worker: str) -> None:
        barrier.wait()
        r = Client().post(reverse("join", args=[invite.key]), {"PROLIFIC_PID": worker})
        statuses.append(r.status_code)
        connection.close()

    threads = [threading.Thread(target=open_link, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hires = list(Hire.objects.values_list("worker_id", flat=True))
    assert len(hires) == 2 and len(set(hires)) == 2  # the cap, and never two for one id
    # the second "same" is refused as joined (409) whether or not the cap let it in
    assert sorted(statuses) == sorted(
        [200, 200, 409, 410] if "same" in hires else [200, 200, 410, 410]
    )
    assert User.objects.filter(username__startswith="w-").count() == 2


def test_an_atomic_check_takes_its_gold_from_factscores_human_labels(
    alpha: Project, users: dict[str, User]
) -> None:
    """Issue 25, item 6: FActScore's released human S/NS/IR labels (the real file) as the
    reference of an atomic-fact check, each fact's label as the kind names it."""
    from annotation.ingest import FACTSCORE_HUMAN, FACTSCORE_LABELS, import_file
    from annotation.kinds.atomic import atomic_items
    from annotation.models import System, Verdict
    from tests.conftest import peer_file

    lines = peer_file("factscore_labeled/InstructGPT.jsonl").read_text().splitlines()[:3]
    import_file(project=alpha, text="\n".join(lines), file="InstructGPT.jsonl")
    human = System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    item = next(i for i in atomic_items(project=alpha, system=human) if i.list_a is not None)
    published = {
        f"fact:{pos}.label": {"S": "supported", "NS": "not-supported", "IR": "irrelevant"}[label]
        for pos, label in Verdict.objects.filter(
            system__name=FACTSCORE_LABELS, claim__claim_list=item.list_a
        ).values_list("claim__position", "label")
    }
    assert published and len(published) == item.list_a.claims.count()  # type: ignore[union-attr]
    r = token_client(users["alice"]).post(
        reverse("api_quality_items", args=[alpha.pk]),
        {"item": item.pk, "role": "check", "reference_system": FACTSCORE_LABELS},
        format="json",
    )
    assert r.status_code == 201, r.content
    assert r.json()["reference"] == published
    # a verdict the kind cannot read as a fact label is named, not guessed
    Verdict.objects.filter(system__name=FACTSCORE_LABELS, claim__claim_list=item.list_a).update(
        label="maybe"
    )
    with pytest.raises(ValueError, match="fact 1: the verdict 'maybe' is not S, NS or IR"):
        hiring.mark(item, hiring.CHECK, {}, system=System.objects.get(name=FACTSCORE_LABELS))


@pytest.mark.parametrize("role", [hiring.TRAINING, hiring.CHECK, hiring.EXAMPLE])
def test_regular_leaves_out_quality_items_through_every_path(
    alpha: Project, alpha_items: list[Item], role: str
) -> None:
    marked = alpha_items[0]
    hiring.QualityItem.objects.create(item=marked, role=role)
    items = Item.objects.filter(hiring.regular("pk"), project=alpha)
    assert set(items) == set(alpha_items[1:])
    assignments = Assignment.objects.filter(hiring.regular(), item__project=alpha)
    assert {a.item for a in assignments} == set(alpha_items[1:])
    assert assignments.count() == Assignment.objects.filter(item__project=alpha).count() - 2
    for a in Assignment.objects.filter(item__in=alpha_items):
        a.answers.create(unit="item", field="choice", value="a")
    answers = Answer.objects.filter(hiring.regular("assignment__item_id"))
    assert {a.assignment.item for a in answers} == set(alpha_items[1:])
