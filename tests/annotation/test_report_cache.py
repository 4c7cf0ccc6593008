"""The report cache: a table download, report.json or report.html after a page view is
served from the cached report (no statistic runs again), and every write a report reads
(answer, gold value, import, verdict, member, project settings) invalidates it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import operations, reports
from annotation.ingest import import_file
from annotation.models import Answer, Item, Membership, Project, SentenceCount, System, Verdict
from annotation.reports import metrics
from pipeline.split import sentences_for

from ..conftest import canonical_line

OPTIONS = {"bootstrap": "50"}


def table(project: Project, name: str = "agreement-verification-label-coefficients") -> str:
    return reverse("report_table", args=[project.pk, name, "csv"])


def built(client: Client, url: str, params: dict[str, str] = OPTIONS) -> tuple[int, Any]:
    """How many reports were built to answer `url` (build_report watched, not replaced),
    and the response."""
    with mock.patch.object(reports, "build_report", wraps=reports.build_report) as spy:
        response = client.get(url, params)
    assert response.status_code == 200, url
    return spy.call_count, response


def test_downloads_after_a_page_view_run_no_statistic_again(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    assert built(client, reverse("report", args=[alpha.pk]))[0] == 1
    tables = [table(alpha), reverse("report_table", args=[alpha.pk, "verifier-scores", "json"])]
    for url in (
        *tables,
        reverse("report_json", args=[alpha.pk]),
        reverse("report_html", args=[alpha.pk]),
    ):
        for again in (False, True):
            with CaptureQueriesContext(connection) as queries:
                n, _ = built(client, url)
            assert n == 0, url
            sql = " ".join(q["sql"] for q in queries.captured_queries)
            # session, user, project, the options form's choices, the version, the cache (a
            # table: its text; on a first download then the entry and table in one query;
            # the whole report: the entry, then its tables); a table's first download also
            # stores it rendered (the database cache: count, savepoint, select, insert, release)
            most = 8 if again or url not in tables else 8 + 5
            assert len(queries.captured_queries) <= most, sql
            for table_name in ("annotation_answer", "annotation_verdict", "annotation_claim"):
                assert table_name not in sql, (url, table_name)


def test_a_table_downloaded_again_is_not_rendered_again(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    built(client, reverse("report", args=[alpha.pk]))
    for fmt in ("csv", "json", "tex"):
        url = reverse("report_table", args=[alpha.pk, "verifier-scores", fmt])
        with mock.patch.object(reports, "table_text", wraps=reports.table_text) as spy:
            n, first = built(client, url)
            assert (n, spy.call_count) == (0, 1), fmt  # from the cached report, rendered once
            with mock.patch.object(reports, "_read", wraps=reports._read) as read:
                n, again = built(client, url)
            assert (n, spy.call_count, read.call_count) == (0, 1, 0), fmt  # no table read
        assert again.content == first.content and b"verifier" in first.content
    # a new answer: another report, its table rendered anew
    _answer(alpha, users)
    with mock.patch.object(reports, "table_text", wraps=reports.table_text) as spy:
        assert built(client, table(alpha))[0] == 1 and spy.call_count == 1


def test_a_long_tables_csv_is_rendered_with_the_report(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    """A table above LONG_TABLE rows gets its CSV rendered when the report is built: its
    first download after the page view renders nothing; shorter tables render on demand."""
    client.force_login(users["alice"])
    name = "verifier-scores"
    with mock.patch.object(reports, "LONG_TABLE", 0):
        built(client, reverse("report", args=[alpha.pk]))
    url = reverse("report_table", args=[alpha.pk, name, "csv"])
    with mock.patch.object(reports, "table_text", wraps=reports.table_text) as spy:
        n, response = built(client, url)
    assert (n, spy.call_count) == (0, 0)
    assert response.content.decode() == reports.table_text(
        reports.cached_table(alpha, name, bootstrap=50), "csv"
    )
    # the default: none of this small project's tables is long; rendered on first download
    _answer(alpha, users)
    built(client, reverse("report", args=[alpha.pk]))
    with mock.patch.object(reports, "table_text", wraps=reports.table_text) as spy:
        assert built(client, url)[0] == 0 and spy.call_count == 1


def test_an_absurd_table_name_is_a_plain_404(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    built(client, reverse("report", args=[alpha.pk]))
    for name in ("x" * 5000, "no-such-table"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a cache key too long for memcached warns
            response = client.get(reverse("report_table", args=[alpha.pk, name, "csv"]), OPTIONS)
        assert response.status_code == 404


def test_other_options_are_other_reports(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    assert built(client, table(alpha))[0] == 1
    assert built(client, table(alpha), {"bootstrap": "51"})[0] == 1
    assert built(client, table(alpha), {"bootstrap": "50", "seed": "1"})[0] == 1
    n, pseudonyms = built(client, table(alpha, "agreement-verification-label-annotators"))
    assert n == 0
    n, names = built(
        client,
        table(alpha, "agreement-verification-label-annotators"),
        {"bootstrap": "50", "names": "1"},
    )
    assert n == 1
    assert b"bob" in names.content and b"bob" not in pseudonyms.content


def test_a_cached_report_is_not_served_to_anyone_else(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    built(client, table(alpha))
    for person in ("bob", "carol", "dave", "erin"):  # annotators, a stranger, another lab
        client.force_login(users[person])
        assert client.get(table(alpha), OPTIONS).status_code == 404, person


def _answer(alpha: Project, users: dict[str, User]) -> None:
    item = Item.objects.filter(project=alpha, kind=Item.VERIFICATION).first()
    assert item is not None
    assignment = item.assignments.get(annotator=users["bob"])
    membership = Membership.objects.get(project=alpha, user=users["bob"])
    outcome = operations.answer(
        assignment,
        membership,
        {
            "label": "contradicted",
            "stance__evidence:1": "contradicts",
            "stance__evidence:2": "contradicts",
            "confirm": "on",
        },
        operations.Action.RESUBMIT,
    )
    assert outcome.stored, outcome


def _gold(alpha: Project, users: dict[str, User]) -> None:
    item = Item.objects.filter(project=alpha, kind=Item.VERIFICATION).first()
    assert item is not None
    operations.adjudicate(
        item=item, unit="item", field="label", value="contradicted", by=users["alice"]
    )


def _import(alpha: Project, users: dict[str, User]) -> None:
    import_file(project=alpha, text=canonical_line(9), file="more.jsonl")


def _verdict(alpha: Project, users: dict[str, User]) -> None:
    v1 = System.objects.get(project=alpha, name="verifier-one")
    Verdict.objects.filter(system=v1).first().delete()  # type: ignore[union-attr]
    claim = Item.objects.filter(project=alpha, kind=Item.VERIFICATION).first().claim  # type: ignore[union-attr]
    Verdict.objects.create(claim=claim, system=v1, label="unsupported")


def _member(alpha: Project, users: dict[str, User]) -> None:
    alpha.add_member(users["dave"], Membership.ANNOTATOR)


def _settings(alpha: Project, users: dict[str, User]) -> None:
    stale = Project.objects.get(pk=alpha.pk)  # read before another write bumps it
    Project.objects.get(pk=alpha.pk).set_instructions("New rules.")
    stale.verifier_collapse = {"strict": {"supported": "supported"}}
    stale.save()


WRITES: dict[str, Callable[[Project, dict[str, User]], None]] = {
    "answer": _answer,
    "gold value": _gold,
    "import": _import,
    "verdict": _verdict,
    "member": _member,
    "project settings": _settings,
}


@pytest.mark.parametrize("write", list(WRITES))
def test_every_write_a_report_reads_invalidates_it(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project, write: str
) -> None:
    client.force_login(users["alice"])
    before = Project.objects.get(pk=alpha.pk).data_version
    built(client, reverse("report", args=[alpha.pk]))
    assert built(client, table(alpha))[0] == 0
    WRITES[write](alpha, users)
    assert Project.objects.get(pk=alpha.pk).data_version > before
    assert built(client, table(alpha))[0] == 1, write
    assert built(client, table(alpha))[0] == 0, write


def test_a_change_made_in_the_admin_invalidates_every_cached_report(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    built(client, table(alpha))
    answer = Answer.objects.filter(assignment__item__project=alpha, field="label").first()
    assert answer is not None
    root = Client()
    root.force_login(User.objects.create_superuser("root", password="pw-root"))
    url = reverse("admin:annotation_answer_delete", args=[answer.pk])
    assert root.post(url, {"post": "yes"}).status_code == 302
    assert not Answer.objects.filter(pk=answer.pk).exists()
    assert built(client, table(alpha))[0] == 1


def test_a_new_answer_changes_the_downloaded_table(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    url = table(alpha)
    _, first = built(client, url)
    _answer(alpha, users)  # bob now agrees with carol's "contradicted" on claim 1
    _, second = built(client, url)
    assert first.content != second.content


def test_a_stale_project_instance_never_writes_an_old_version_back(
    users: dict[str, User], alpha: Project
) -> None:
    stale = Project.objects.get(pk=alpha.pk)
    for _ in range(3):
        Project.objects.get(pk=alpha.pk).set_instructions(f"v{_}")
    seen = Project.objects.get(pk=alpha.pk).data_version
    stale.name = "renamed"
    stale.save()
    assert Project.objects.get(pk=alpha.pk).data_version == seen + 1


def test_sentence_counts_are_stored_per_splitter_and_recounted_after_an_edit(
    alpha: Project,
) -> None:
    docs = {
        d.pk: (d.response, d.question) for d in alpha.documents.all()
    }  # the real import fixture
    counts = metrics.sentence_counts(alpha, docs)
    assert SentenceCount.objects.filter(splitter=metrics.SPLITTER).count() == len(docs)
    with mock.patch("annotation.reports.metrics.sentences_for", wraps=sentences_for) as spy:
        assert metrics.sentence_counts(alpha, docs) == counts
        assert spy.call_count == 0  # stored, not split again
        doc = next(iter(docs))
        edited = dict(docs)
        edited[doc] = ("One. Two. Three. Four. Five.", "")
        again = metrics.sentence_counts(alpha, edited)
        assert spy.call_count == 1
    assert again[doc] == 5
    assert SentenceCount.objects.get(document_id=doc).count == 5


def test_the_cache_holds_what_pages_show_without_the_stats_objects(
    verification: list[Item], alpha: Project
) -> None:
    """Section.data (the stats objects) repeats the tables: the cached report leaves it out,
    on the first (built) call as on a hit, and keeps every table, chart and note."""
    first = reports.cached_report(alpha, bootstrap=50)
    again = reports.cached_report(alpha, bootstrap=50)
    built_now = reports.build_report(alpha, bootstrap=50)
    assert any(s.data is not None for s in built_now.sections)
    for report in (first, again):
        assert all(s.data is None for s in report.sections)
        assert [(s.slug, s.notes, s.tables, s.charts) for s in report.sections] == [
            (s.slug, s.notes, s.tables, s.charts) for s in built_now.sections
        ]


def test_a_table_download_reads_that_table_only(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    """The cache holds each table under its own key: a download reads the report's entry
    (its sections without tables) and that table, in one query; report.json reads them all."""
    client.force_login(users["alice"])
    assert built(client, reverse("report", args=[alpha.pk]))[0] == 1
    name = "agreement-verification-label-coefficients"
    key = reports._key(alpha, reports.ReportOptions(bootstrap=50))
    with mock.patch.object(reports, "cache", wraps=reports.cache) as spy:
        n, response = built(client, table(alpha, name))
        assert n == 0
        assert spy.get_many.call_args_list == [
            mock.call([key, reports._table_key(key, name)])
        ]  # after the rendered text's key, missing
        assert [c.args for c in spy.get.call_args_list] == [(reports._text_key(key, name, "csv"),)]
        spy.reset_mock()
        assert client.get(reverse("report_json", args=[alpha.pk]), OPTIONS).status_code == 200
        (read,) = spy.get_many.call_args_list  # the whole report for report.json
        assert len(read.args[0]) == len(reports.cached_report(alpha, bootstrap=50).tables()) > 1
    entry = reports.cache.get(key)
    assert isinstance(entry, reports.CachedReport) and not entry.report.tables()
    report = reports.cached_report(alpha, bootstrap=50)
    assert response.content.decode() == reports.table_csv(report.table(name))
    assert (
        client.get(reverse("report_table", args=[alpha.pk, "nope", "csv"]), OPTIONS).status_code
        == 404
    )


def test_a_table_evicted_apart_from_its_entry_is_a_miss(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    """The cache may lose one table and keep the report's entry (the database cache culls
    entries one by one; a write can fail silently): the report or that table is then built
    again and stored again, never served partial; the other tables are still served."""
    client.force_login(users["alice"])
    expected = reports.build_report(alpha, bootstrap=50).without_data()
    name, other = "agreement-verification-label-coefficients", "verifier-scores"
    key = reports._key(alpha, reports.ReportOptions(bootstrap=50))
    for ask in ("report", "table"):
        reports.cached_report(alpha, bootstrap=50)
        reports.cache.delete(reports._table_key(key, name))
        assert reports.is_cached(alpha, bootstrap=50)  # the entry is there
        assert built(client, table(alpha, other))[0] == 0  # another table: still served
        if ask == "report":
            with mock.patch.object(reports, "build_report", wraps=reports.build_report) as spy:
                report = reports.cached_report(alpha, bootstrap=50)
            assert spy.call_count == 1
            assert [(s.slug, s.tables) for s in report.sections] == [
                (s.slug, s.tables) for s in expected.sections
            ]
        else:
            n, response = built(client, table(alpha, name))
            assert n == 1
            assert response.content.decode() == reports.table_csv(expected.table(name))
        assert reports.cache.get(reports._table_key(key, name))[1] == expected.table(name)
        assert built(client, reverse("report_json", args=[alpha.pk]))[0] == 0  # stored again


def test_an_entry_never_takes_the_tables_of_another_build(
    users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    """Two builds of one report store under the same keys at once, and a build may hold data
    newer than its key: the entry of one and the tables of the other (A's tables, B's tables,
    B's entry, A's entry) is a miss, never a report mixing the two."""
    key = reports._key(alpha, reports.ReportOptions(bootstrap=50))
    name = "agreement-verification-label-coefficients"
    older = reports.cached_report(alpha, bootstrap=50)
    first = reports.cache.get(key)  # build A's entry
    _answer(alpha, users)  # B sees an answer A did not (under the same, older key)
    newer = reports.build_report(alpha, bootstrap=50).without_data()
    assert newer.table(name) != older.table(name)
    reports._store(key, newer)  # B's tables and entry
    reports.cache.set(key, first)  # then A's entry, last
    # read under the old key (as a request that read the version before the answer)
    assert reports._read(key) is None and reports._read(key, name) is None
    reports._store(key, newer)
    again = reports._read(key, name)
    assert again is not None and again.tables() == [newer.table(name)]
    assert reports._read(key) is not None


def test_a_culling_cache_never_serves_a_partial_report(
    settings: Any, verification: list[Item], alpha: Project
) -> None:
    """The database cache at its MAX_ENTRIES culls a third of its entries, those whose keys
    sort first, at any write, even between a report's tables: with room for fewer entries
    than the report has tables, every report served is whole."""
    expected = reports.build_report(alpha, bootstrap=50).without_data()
    count = len(expected.tables())
    backend = settings.CACHES["default"]
    settings.CACHES = {"default": {**backend, "OPTIONS": {"MAX_ENTRIES": count // 2}}}
    assert reports.cache._max_entries == count // 2  # the settings' cache, not another
    for seed in range(4):  # other keys, sorting before and after the report's
        reports.cache.set(f"other:{seed}", "x")
        report = reports.cached_report(alpha, bootstrap=50)
        assert [(s.slug, s.tables) for s in report.sections] == [
            (s.slug, s.tables) for s in expected.sections
        ]
        for name in ("agreement-verification-label-coefficients", "verifier-scores"):
            assert reports.cached_table(alpha, name, bootstrap=50) == expected.table(name)
