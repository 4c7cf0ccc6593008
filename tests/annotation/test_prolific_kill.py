"""Issue 41: a bonus is paid exactly once even when the process paying it is killed
(SIGKILL, a real subprocess: `manage.py prolific ... pay`) after Prolific paid and before
the payment was recorded. Prolific's pay call is not idempotent (its API reference, "Pay
bonuses": "Sending multiple requests with the same bulk bonus payment ID will result in
participants being paid multiple times"); the next run reconciles from the submission's
`bonus_payments` (pyrolific models/submission_detail.py: "Bonus payments that have been
paid on the submission. Returned in pence / cents") and pays nothing twice.

The fake Prolific pays, then holds its answer (`hold_pay`) until the test has killed the
caller: the kill lands between the call and the record, by state, not by timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from annotation.prolific.fake import FakeProlific
from annotation.prolific.models import ProlificBonus
from tests.servers import ROOT

from .test_pipeline_workers import database_env
from .test_prolific import TOKEN_ENV, fake, lab, make_study, pinvite, take

__all__ = ["fake", "lab", "pinvite"]  # fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
DEADLINE = 180  # seconds: a deadline for a state (the pay call arrived), not a wait


def command(lab: FakeProlific, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    env.update(database_env())
    env["PROLIFIC_WORKSPACES"] = json.dumps(
        [{"name": "lab", "token_env": TOKEN_ENV, "base_url": lab.base_url, "max_bonus": "5"}]
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "prolific", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_between_the_pay_call_and_its_record_pays_once(pinvite, lab) -> None:  # type: ignore[no-untyped-def]
    study = make_study(pinvite)
    done = take(lab, study, pinvite, passes=True)
    args = (str(pinvite.project_id), str(pinvite.pk), "pay")
    pull = command(lab, str(pinvite.project_id), str(pinvite.pk), "pull")
    assert pull.wait(timeout=DEADLINE) == 0, pull.stderr.read() if pull.stderr else ""

    lab.hold_pay()
    victim = command(lab, *args)
    deadline = time.monotonic() + DEADLINE
    while not lab.pay_seen.wait(0.1):
        assert victim.poll() is None, victim.communicate()
        assert time.monotonic() < deadline, "the pay call never arrived"
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=DEADLINE) == -signal.SIGKILL
    lab.release()
    assert lab.paid == [(done.worker_id, 100)]  # Prolific paid ...
    record = ProlificBonus.objects.get(hire=done)
    assert record.state == ProlificBonus.SENT and record.bulk_id  # ... the record never knew

    again = command(lab, *args)  # a retry, in a new process: reconciles first
    out, err = again.communicate(timeout=DEADLINE)
    assert again.returncode == 0, err
    assert "'paid': []" in out
    assert lab.paid == [(done.worker_id, 100)]  # once
    record.refresh_from_db()
    assert record.state == ProlificBonus.PAID
    assert sum(1 for m, p in lab.requests if p.endswith("/pay/")) == 1
