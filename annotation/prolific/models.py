"""What the platform knows of its Prolific studies (issue 41): the draft study made from
an invite, the submissions pulled from Prolific and matched to hires, and one record per
bonus paid through the API (belonging to the `annotation` app, loaded by
`AnnotationConfig.import_models` like the hiring models).

A ProlificBonus is written **before** Prolific is asked to pay (state `pending`), marked
`sent` with its bulk bonus id before the pay call, and `paid` after it; a process killed
in between leaves `sent`, and `services.reconcile` reads the submission's bonus payments
back from Prolific before anything is paid again. `covers_to` (the hire's bonus total with
this one) is unique per hire among the bonuses not void: two requests racing to pay the
same amount write one record.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone

from ..hiring.models import Hire, Invite


class ProlificStudy(models.Model):
    invite = models.OneToOneField(Invite, models.CASCADE, related_name="prolific")
    workspace = models.CharField(max_length=100)  # the operator's name (workspaces.py)
    study_id = models.CharField(max_length=64)  # Prolific's
    status = models.CharField(max_length=30, default="UNPUBLISHED")
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    synced_at = models.DateTimeField(null=True, blank=True)  # submissions last pulled


class ProlificSubmission(models.Model):
    study = models.ForeignKey(ProlificStudy, models.CASCADE, related_name="submissions")
    submission_id = models.CharField(max_length=64, unique=True)  # Prolific's SESSION_ID
    participant_id = models.CharField(max_length=64)
    status = models.CharField(max_length=30)  # Prolific's: ACTIVE, AWAITING REVIEW, ...
    study_code = models.CharField(max_length=100, blank=True)
    started_at = models.CharField(max_length=40, blank=True)  # as Prolific gave it
    completed_at = models.CharField(max_length=40, blank=True)
    hire = models.ForeignKey(
        Hire, models.SET_NULL, null=True, blank=True, related_name="prolific_submissions"
    )


class ProlificBonus(models.Model):
    PENDING, SENT, PAID, VOID = "pending", "sent", "paid", "void"
    STATES = [
        (PENDING, "recorded, not sent to pay"),
        (SENT, "sent to pay, not confirmed"),
        (PAID, "paid"),
        (VOID, "not paid (refused or never sent)"),
    ]

    hire = models.ForeignKey(Hire, models.PROTECT, related_name="prolific_bonuses")
    study = models.ForeignKey(ProlificStudy, models.PROTECT, related_name="bonuses")
    submission_id = models.CharField(max_length=64)
    participant_id = models.CharField(max_length=64)
    amount = models.DecimalField(max_digits=8, decimal_places=2)  # account currency
    covers_to = models.DecimalField(max_digits=10, decimal_places=2)  # the total with it
    state = models.CharField(max_length=10, choices=STATES, default=PENDING)
    bulk_id = models.CharField(max_length=64, blank=True)  # Prolific's bulk bonus id
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hire", "covers_to"],
                condition=~models.Q(state="void"),
                name="one_bonus_per_hire_total",
            )
        ]
