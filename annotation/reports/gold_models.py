"""Annotator models fitted in the background (issue 39): a report whose gold method is a
model (Dawid-Skene, MACE, GLAD) reads the model's decision per distinct row of answers
from the cache, fitted by the task worker (`fit_gold`, `manage.py db_worker`) on the
report's own answers (its filters) and kept per data version (`Project.data_version`,
as the report cache: a key names the version, so an entry is never stale). Until the fit
is done the report uses majority vote and says so, with the fit's progress (fields
fitted of all): never a blank wait. A model's fit takes too long for a page (MACE and
GLAD: bench/RESULTS.md, "Gold by annotator models").

A fit's state in the cache: queued (enqueued, not started), running (a worker fits it;
`started_at` by `clock()`), done (the columns), failed (the error, shown in the report;
an outage is an error, never a result), stale (the data changed before the worker began:
nothing fitted; the next report asks again under its own version). A queued or running
fit older than GOLD_FIT_SECONDS by `clock()` (a killed worker) is enqueued again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from .. import kinds
from ..answers import FieldCodes, FieldKey, read_answers
from ..gold import METHOD_TITLES, MODELS, GoldColumn, GoldMethod, adjudications, project_method
from ..models import Project
from .queries import assignment_filter
from .tables import Filters, Report, Section

QUEUED, RUNNING, DONE, FAILED, STALE = "queued", "running", "done", "failed", "stale"
CACHE_SECONDS = 7 * 24 * 3600  # a key names the data version: an entry is never stale


@dataclass(frozen=True)
class Fit:
    """One model's fit on one report's answers, as the cache holds it."""

    method: str
    state: str
    done: int = 0  # fields fitted
    total: int = 0  # fields to fit (0 until the worker has read the answers)
    columns: Mapping[FieldKey, GoldColumn] | None = None  # when done
    error: str = ""
    started_at: datetime | None = None

    @property
    def progress(self) -> str:
        if self.state == QUEUED:
            return "queued for the task worker"
        if self.state == RUNNING:
            of = f"{self.done} of {self.total} fields fitted" if self.total else "reading answers"
            return f"computing: {of}"
        return self.state


def clock() -> datetime:
    """The time a fit started and its staleness: timezone.now(). A test puts in a clock it
    advances itself (as `tasks.clock`), so a slow machine never makes a fit look lost."""
    return timezone.now()


def report_fields() -> list[str]:
    """The fields whose gold a report uses: each kind's verdict field, and the main field
    of the kinds with a preference section (the sensitivity section's gold choices)."""
    fields = [s.verdict_field for s in kinds.all_specs() if s.verdict_field]
    fields += [
        s.main_field
        for s in kinds.all_specs()
        if "preference" in s.report_sections and s.main_field and s.main_field not in fields
    ]
    return fields


def _filters_json(filters: Filters) -> dict[str, Any]:
    return {
        "annotators": list(filters.annotators),
        "domains": list(filters.domains),
        "date_from": filters.date_from.isoformat() if filters.date_from else None,
        "date_to": filters.date_to.isoformat() if filters.date_to else None,
    }


def _filters_of(data: dict[str, Any]) -> Filters:
    return Filters(
        annotators=tuple(data["annotators"]),
        domains=tuple(data["domains"]),
        date_from=date.fromisoformat(data["date_from"]) if data["date_from"] else None,
        date_to=date.fromisoformat(data["date_to"]) if data["date_to"] else None,
    )


def _key(project_id: int, version: int, method: str, filters: dict[str, Any]) -> str:
    digest = hashlib.sha256(repr(sorted(filters.items())).encode()).hexdigest()
    return f"goldfit:{project_id}:{version}:{method}:{digest}"


def _lost(fit: Fit) -> bool:
    """Queued or running for longer than GOLD_FIT_SECONDS: its worker is gone."""
    limit = timedelta(seconds=settings.GOLD_FIT_SECONDS)
    return (
        fit.state in (QUEUED, RUNNING)
        and fit.started_at is not None
        and clock() - fit.started_at > limit
    )


def fit_of(project: Project, filters: Filters, method: str) -> Fit:
    """The model's fit on the report's answers at the project's current data version;
    enqueued for the task worker when there is none yet (or its worker was lost)."""
    if method not in MODELS:
        raise ValueError(f"unknown annotator model {method!r}; one of {', '.join(MODELS)}")
    version = Project.objects.filter(pk=project.pk).values_list("data_version", flat=True).get()
    data = _filters_json(filters)
    key = _key(project.pk, version, method, data)
    fit: Fit | None = cache.get(key)
    if fit is not None and fit.state != STALE and not _lost(fit):
        return fit
    fit = Fit(method, QUEUED, started_at=clock())
    cache.set(key, fit, CACHE_SECONDS)
    pk = project.pk
    transaction.on_commit(lambda: fit_gold.enqueue(pk, method, data, version), robust=True)
    return fit


def fit_here(project: Project, filters: Filters, method: str) -> Fit:
    """`fit_of`, fitted in this process when not done yet (the command line, which has no
    page to come back to): the same task body, the same cache entry."""
    fit = fit_of(project, filters, method)
    if fit.state != DONE:
        version = Project.objects.filter(pk=project.pk).values_list("data_version", flat=True)
        fit_gold.call(project.pk, method, _filters_json(filters), version.get())
        fit = fit_of(project, filters, method)
    return fit


def fit_columns(
    project: Project,
    filters: Filters,
    method: str,
    progress: Callable[[int, int], None] | None = None,
) -> dict[FieldKey, GoldColumn]:
    """The model's GoldColumn per verdict field of the report's answers (anchored as
    `gold.project_method` anchors it), one field at a time."""
    answers = read_answers(project, where=assignment_filter(filters))
    fields = report_fields()
    adjudicated = adjudications(project, fields)
    chosen = project_method(project, adjudicated, method)
    todo = [(key, codes) for key, codes in answers.fields.items() if codes.field in fields]
    columns: dict[FieldKey, GoldColumn] = {}
    for n, (key, codes) in enumerate(todo):
        if progress:
            progress(n, len(todo))
        columns[key] = chosen(codes)
    return columns


def cached_method(columns: Mapping[FieldKey, GoldColumn]) -> GoldMethod:
    """A GoldMethod that reads a fitted model's columns (the same answers give the same
    distinct rows in the same order)."""

    def gold(codes: FieldCodes) -> GoldColumn:
        column = columns.get((codes.kind, codes.level, codes.field))
        if column is None or len(column.values) != len(codes.distinct):
            raise LookupError(
                f"no fitted gold for {codes.kind}.{codes.level}.{codes.field}: the answers"
                " changed since the fit"
            )
        return column

    return gold


@task()
def fit_gold(project_id: int, method: str, filters: dict[str, Any], version: int) -> str:
    """Fit `method` on a report's answers (its filters) at data version `version`, storing
    the state, the progress and then the columns in the cache; returns the final state."""
    key = _key(project_id, version, method, filters)
    current: Fit | None = cache.get(key)
    if current is not None and current.state == DONE:
        return DONE
    project = Project.objects.filter(pk=project_id).first()
    if project is None or project.data_version != version:
        cache.set(key, Fit(method, STALE), CACHE_SECONDS)
        return STALE
    fit = Fit(method, RUNNING, started_at=clock())
    cache.set(key, fit, CACHE_SECONDS)

    def progress(done: int, total: int) -> None:
        cache.set(key, replace(fit, done=done, total=total), CACHE_SECONDS)

    try:
        columns = fit_columns(project, _filters_of(filters), method, progress)
    except Exception as error:  # noqa: BLE001 - recorded, shown in the report, re-raised
        # kept for the cache's default timeout, then asked for again
        cache.set(key, replace(fit, state=FAILED, error=f"{type(error).__name__}: {error}"))
        raise
    cache.set(
        key,
        replace(fit, state=DONE, done=len(columns), total=len(columns), columns=columns),
        CACHE_SECONDS,
    )
    return DONE


PENDING_SLUG = "gold-computing"  # a report with this section is not cached


def pending(report: Report) -> bool:
    """Whether the report waits on a model's fit (then it is not cached): its gold
    method's, or one the sensitivity section compares."""
    return any(
        s.slug == PENDING_SLUG or (isinstance(s.data, dict) and s.data.get("pending"))
        for s in report.sections
    )


def resolve(
    project: Project, filters: Filters, name: str | None
) -> tuple[str, str | GoldMethod, Fit | None]:
    """The report's gold method: (its name, what `report_data` takes, the model's fit or
    None). A model's fit not done yet: majority vote meanwhile."""
    name = name or project.gold_method
    if name not in MODELS:
        return name, name, None
    fit = fit_of(project, filters, name)
    if fit.state == DONE and fit.columns is not None:
        return name, cached_method(fit.columns), fit
    return name, "majority", fit


def notice_section(fit: Fit) -> Section:
    """What the report says of a model's fit: done, or computing with its progress (the
    tables then use majority vote), or failed with the error."""
    title = f"Gold method: {METHOD_TITLES[fit.method]}"
    if fit.state == DONE:
        return Section(
            "gold-method",
            title,
            notes=(
                f"Gold values where no one adjudicated are {METHOD_TITLES[fit.method]}'s"
                f" (fitted by the task worker on this report's answers, {fit.total} field(s)).",
            ),
        )
    if fit.state == FAILED:
        note = f"The fit failed: {fit.error}. The tables below use majority vote."
    else:
        note = (
            f"{METHOD_TITLES[fit.method]} is being fitted ({fit.progress}); until it is done"
            " the tables below use majority vote. Reload the page to see its progress."
        )
    return Section(PENDING_SLUG, title, notes=(note,))
