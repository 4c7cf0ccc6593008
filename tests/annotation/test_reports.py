"""Reports on a small hand-built project; every expected number is worked out here."""

from __future__ import annotations

import csv
import io
import json
import random
import statistics
from datetime import date, timedelta

import pytest
from django.contrib.auth.models import User

from annotation import exports, reports, safecsv
from annotation.hiring.models import CHECK, QualityItem
from annotation.manage import delete_items
from annotation.models import Assignment, Claim, ClaimList, Document, Item, Project, System
from tests.conftest import SYSTEM_A, SYSTEM_B


def coefficient(report: reports.Report, table: str, name: str) -> float | None:
    for row in report.table(table).as_dicts():
        if row["coefficient"] == name:
            return row["value"]  # type: ignore[return-value]
    raise KeyError(name)


def test_it_has_no_sections_without_data(beta: Project) -> None:
    report = reports.build_report(beta, bootstrap=0)
    assert report.sections == ()
    assert report.tables() == []


def test_claim_label_agreement_matches_the_hand_computation(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=200, seed=3)
    table = "agreement-verification-label-coefficients"
    # 3 of 4 claims agree.
    assert coefficient(report, table, "Percent agreement") == pytest.approx(0.75)
    # Fleiss: p = S 3/8, C 3/8, I 2/8; Pe = 22/64; (48/64 - 22/64) / (1 - 22/64) = 26/42.
    assert coefficient(report, table, "Fleiss' kappa") == pytest.approx(26 / 42)
    # Cohen: bob S2 C1 I1, carol S1 C2 I1; pe = (2 + 2 + 1) / 16; (12/16 - 5/16) / (11/16).
    pair = report.table("agreement-verification-label-pairwise").as_dicts()
    assert len(pair) == 1
    assert {pair[0]["annotator"], pair[0]["other"]} == {"A1", "A2"}
    assert pair[0]["Cohen's kappa"] == pytest.approx(7 / 11)
    assert pair[0]["CI low"] is not None and pair[0]["CI low"] <= 7 / 11 <= pair[0]["CI high"]
    per = report.table("agreement-verification-label-annotators").as_dicts()
    assert [p["percent agreement"] for p in per] == [pytest.approx(0.75)] * 2
    overview = report.table("agreement-overview").as_dicts()
    label_row = next(r for r in overview if r["field"] == "label")
    assert label_row["units used"] == 4 and label_row["raters per unit"] == "2"
    section = report.section("agreement-verification-label")
    assert section is not None and section.charts and "<svg" in section.charts[0].svg


def test_stance_agreement_and_informative_ranks(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    # 8 evidence units, 7 agree.
    assert coefficient(
        report, "agreement-verification-stance-coefficients", "Percent agreement"
    ) == pytest.approx(7 / 8)
    ranks = report.table("evidence-ranks").as_dicts()
    assert ranks[0]["rank"] == 1 and ranks[0]["judgements"] == 8
    assert ranks[0]["% informative"] == pytest.approx(100.0)
    assert ranks[1]["contradicts"] == 1 and ranks[1]["% informative"] == pytest.approx(12.5)


def test_claim_label_distribution_uses_the_tie_rule(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    rows = {r["label"]: (r["count"], r["%"]) for r in report.table("claim-labels").as_dicts()}
    assert rows["Supported"] == (1, 25.0)
    assert rows["Contradicted"] == (1, 25.0)
    # claim 2 (supported vs contradicted) is a tie: inconclusive, as in the paper.
    assert rows["Inconclusive (not enough information)"] == (2, 50.0)
    assert rows["Inconclusive (conflicting evidence)"] == (0, 0.0)


def test_verifiers_against_gold_match_the_hand_computation(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    scores = {(r["system"], r["mode"]): r for r in report.table("verifier-scores").as_dicts()}
    # Gold, binary: S U U U. verifier-one says S S U S.
    one = scores[("verifier-one", "binary")]
    assert one["units"] == 4
    assert one["supported F1"] == pytest.approx(0.5)  # P 1/3, R 1
    assert one["unsupported F1"] == pytest.approx(0.5)  # P 1, R 1/3
    assert one["accuracy"] == pytest.approx(0.5)
    assert one["balanced accuracy"] == pytest.approx((1 + 1 / 3) / 2)
    classes = {
        (r["system"], r["mode"], r["class"]): r for r in report.table("verifier-classes").as_dicts()
    }
    assert classes[("verifier-one", "binary", "supported")]["precision"] == pytest.approx(1 / 3)
    assert classes[("verifier-one", "binary", "unsupported")]["recall"] == pytest.approx(1 / 3)
    # A binary verifier has no ternary scores, and the report says why.
    assert ("verifier-one", "ternary") not in scores
    section = report.section("verifiers")
    assert section is not None and any("verifier-one: no ternary" in n for n in section.notes)
    # verifier-two, ternary: gold S I C I, says S C C I: 3 of 4.
    assert scores[("verifier-two", "ternary")]["accuracy"] == pytest.approx(0.75)
    assert scores[("verifier-two", "binary")]["accuracy"] == pytest.approx(1.0)
    confusion = report.table("confusion-verifier-one-claim-binary").as_dicts()
    assert confusion == [
        {"human \\ system": "supported", "supported": 1, "unsupported": 0},
        {"human \\ system": "unsupported", "supported": 2, "unsupported": 1},
    ]
    mcnemar = report.table("mcnemar").as_dicts()[0]
    assert (mcnemar["system A"], mcnemar["system B"]) == ("verifier-one", "verifier-two")
    assert (mcnemar["both correct"], mcnemar["only A correct"], mcnemar["only B correct"]) == (
        2,
        0,
        2,
    )
    assert mcnemar["method"] == "exact" and mcnemar["p-value"] == pytest.approx(0.5)
    wrong = [
        r
        for r in report.table("verifier-disagreements").as_dicts()
        if r["system"] == "verifier-one" and r["mode"] == "binary"
    ]
    assert sorted(r["item"] for r in wrong) == [verification[1].pk, verification[3].pk]
    assert wrong[0]["text"].startswith("Claim number")


def test_pipeline_scores_read_the_verdicts(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    table = report.table("veriscore-verifier-one-extractor-v")
    rows = {r["model"]: r for r in table.as_dicts()}
    # K = median claim count per domain = 2. Biography: S = 2 of 2 -> F1 1; ELI5: 1 of 2.
    assert rows["K"]["Biography"] == 2 and rows["K"]["ELI5"] == 2
    assert rows["model-x"]["Biography"] == pytest.approx(100.0)
    assert rows["model-x"]["ELI5"] == pytest.approx(50.0)
    assert rows["model-x"]["Avg."] == pytest.approx(75.0)
    two = {r["model"]: r for r in report.table("veriscore-verifier-two-extractor-v").as_dicts()}
    assert two["model-x"]["Biography"] == pytest.approx(50.0)
    assert two["model-x"]["ELI5"] == pytest.approx(0.0)
    kendall = report.table("veriscore-verifier-one-extractor-v-kendall").as_dicts()
    assert kendall[0]["tau"] is None and "fewer than 2" in kendall[0]["note"]


def test_pipeline_scores_count_abstentions_and_leave_out_unverified_lists(
    verification: list[Item],
) -> None:
    """The section reads only the lists it scores: those with a verdict, and abstained
    ones (no claim to verify); a list of the same extractor nobody verified is not a
    response of the table."""
    project = verification[0].project
    extractor = System.objects.get(project=project, name="extractor-v")
    for n, abstained in enumerate((True, False)):
        doc = Document.objects.create(
            project=project,
            external_id=f"extra-{n}",
            domain="Biography",
            response="Text.",
            source_model="model-x",
        )
        claim_list = ClaimList.objects.create(document=doc, system=extractor, abstained=abstained)
        if not abstained:
            Claim.objects.create(claim_list=claim_list, position=0, text="Never verified.")
    report = reports.build_report(project, bootstrap=0)
    rows = report.table("veriscore-verifier-one-extractor-v-detail").as_dicts()
    bio = next(r for r in rows if r["domain"] == "Biography")
    # the verified response (abstentions counted apart), not the unverified list
    assert (bio["responses"], bio["abstained"]) == (1, 1)


def test_preference_counts_translate_the_presented_order(judged_comparisons: list[Item]) -> None:
    report = reports.build_report(judged_comparisons[0].project, bootstrap=0)
    rows = report.table("preference").as_dicts()
    overall = next(r for r in rows if r["domain"] == "all")
    a_is_first = overall["system A"] == SYSTEM_A
    a, b = ("A", "B") if a_is_first else ("B", "A")
    assert {overall["system A"], overall["system B"]} == {SYSTEM_A, SYSTEM_B}
    assert overall["judgements"] == 8
    assert overall[f"{a} preferred"] == 6 and overall[f"{b} preferred"] == 2
    assert (overall[f"{a} strong"], overall[f"{a} slight"]) == (5, 1)
    assert (overall[f"{b} strong"], overall[f"{b} slight"]) == (0, 2)
    # Two-sided binomial test of 6 of 8: 2 * (1 + 8 + 28) / 256.
    assert overall["binomial p-value"] == pytest.approx(74 / 256)
    bias = report.table("position-bias").as_dicts()[0]
    assert (bias["judgements"], bias["list 1 wins"]) == (8, 3)
    # Choices compared as sides: items 2 and 4 agree.
    assert coefficient(
        report, "agreement-comparison-choice-coefficients", "Percent agreement"
    ) == pytest.approx(0.5)
    section = report.section("preference")
    assert section is not None and SYSTEM_A in section.charts[0].svg
    # No verification data: those sections are not there.
    assert report.section("claim-labels") is None
    assert report.section("verifiers") is None
    assert report.section("pipeline") is None


def test_filters_restrict_domains_annotators_and_dates(
    verification: list[Item], users: dict[str, User]
) -> None:
    project = verification[0].project
    by_domain = reports.build_report(
        project, bootstrap=0, filters=reports.Filters(domains=("Biography",))
    )
    # Claims 1 and 2 only: one agreement out of two.
    assert coefficient(
        by_domain, "agreement-verification-label-coefficients", "Percent agreement"
    ) == pytest.approx(0.5)
    only_bob = reports.build_report(
        project, bootstrap=0, filters=reports.Filters(annotators=(users["bob"].pk,))
    )
    coefficients = only_bob.table("agreement-verification-label-coefficients").as_dicts()
    assert all(c["value"] is None for c in coefficients)
    assert "only one rating" in " ".join(only_bob.section("agreement-verification-label").notes)
    later = reports.build_report(
        project, bootstrap=0, filters=reports.Filters(date_from=date.today() + timedelta(days=2))
    )
    assert later.section("agreement") is None and later.section("effort") is None


def test_annotators_are_pseudonymised_unless_asked(verification: list[Item]) -> None:
    project = verification[0].project
    hidden = json.dumps(reports.build_report(project, bootstrap=0).as_json())
    assert "bob" not in hidden and "carol" not in hidden and "A1" in hidden
    shown = json.dumps(reports.build_report(project, bootstrap=0, real_names=True).as_json())
    assert "bob" in shown and "carol" in shown


def test_effort_counts_items_and_median_seconds(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    rows = {(r["annotator"], r["kind"]): r for r in report.table("effort").as_dicts()}
    assert rows[("A1", "all")]["items done"] == 4
    assert rows[("A1", "verification")]["median active s per item"] is not None


def test_effort_counts_skipped_and_open_assignments_and_sums_seconds(
    verification: list[Item], alpha_items: list[Item]
) -> None:
    project = verification[0].project
    bob = Assignment.objects.filter(item__project=project, annotator__username="bob")
    first, second = bob.filter(item__kind=Item.COMPARISON).order_by("pk")[:2]
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.SKIPPED)
    Assignment.objects.filter(pk=second.pk).update(status=Assignment.SUBMITTED)
    for n, a in enumerate(bob.order_by("pk")):
        Assignment.objects.filter(pk=a.pk).update(active_seconds=10.5 * (n + 1))
    report = reports.build_report(project, bootstrap=0)
    rows = {(r["annotator"], r["kind"]): r for r in report.table("effort").as_dicts()}
    name = project.memberships.get(user__username="bob").pseudonym
    for kind in (Item.COMPARISON, Item.VERIFICATION, "all"):
        mine = bob if kind == "all" else bob.filter(item__kind=kind)
        seconds = sorted(
            mine.filter(status=Assignment.SUBMITTED).values_list("active_seconds", flat=True)
        )
        row = rows[(name, kind)]
        assert row["assigned"] == mine.count(), kind
        assert row["submitted"] == len(seconds), kind
        assert row["skipped"] == mine.filter(status=Assignment.SKIPPED).count(), kind
        assert row["items done"] == row["submitted"] + row["skipped"], kind
        assert seconds and row["median active s per item"] == statistics.median(seconds), kind
        assert row["active hours"] == pytest.approx(sum(seconds) / 3600, abs=1e-12), kind
    assert rows[(name, Item.COMPARISON)]["skipped"] == 1
    assert rows[(name, "all")]["assigned"] > rows[(name, "all")]["items done"]  # some open


def test_effort_leaves_out_deleted_and_quality_items(verification: list[Item]) -> None:
    """The effort query reads the item's deletion off its join (hiring.regular(joined=...)):
    the same assignments left out as by the subquery of every other report query."""
    project = verification[0].project
    bob = project.memberships.get(user__username="bob")
    before = {
        r["kind"]: r["assigned"]
        for r in reports.build_report(project, bootstrap=0).table("effort").as_dicts()
        if r["annotator"] == bob.pseudonym
    }
    mine = Assignment.objects.filter(item__project=project, annotator=bob.user)
    deleted, marked = mine.filter(item__kind=Item.VERIFICATION).order_by("pk")[:2]
    delete_items(project, [deleted.item_id], by=bob.user)
    QualityItem.objects.create(item=marked.item, role=CHECK)
    after = {
        r["kind"]: r["assigned"]
        for r in reports.build_report(project, bootstrap=0).table("effort").as_dicts()
        if r["annotator"] == bob.pseudonym
    }
    assert after[Item.VERIFICATION] == before[Item.VERIFICATION] - 2
    assert after["all"] == before["all"] - 2


def test_exports_parse_back(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0)
    table = report.table("verifier-scores")
    parsed = list(csv.DictReader(io.StringIO(reports.table_csv(table))))
    assert len(parsed) == len(table.rows) and parsed[0]["system"] == table.rows[0][0]
    data = json.loads(reports.report_json(report))
    names = [t["name"] for s in data["sections"] for t in s["tables"]]
    assert names == [t.name for t in report.tables()]
    latex = reports.table_latex(report.table("verifier-disagreements"))
    assert r"\toprule" in latex and r"\bottomrule" in latex
    # Claim texts hold & % { }: escaped for LaTeX.
    assert r"Claim number 1 \& 50\% of \{it\}" in latex
    assert "verifier-one & claim & binary" in latex


def test_latex_escapes_every_special_character() -> None:
    assert reports.latex_escape("a_b & 5% $x$ #1 {y} ~ ^ \\") == (
        r"a\_b \& 5\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )


def test_wide_export_marks_missing_answers(
    verification: list[Item], users: dict[str, User], alpha: Project
) -> None:
    from annotation.models import Assignment

    extra = verification[0]
    # dave is not in the project; bob's draft on a new item has no submitted answer.
    item = Item.objects.create(
        project=alpha, kind=Item.VERIFICATION, document=extra.document, claim=None
    )
    Assignment.objects.create(item=item, annotator=users["bob"])
    header, rows = exports.wide_rows(alpha)
    assert header[:6] == ["item", "kind", "document", "domain", "unit", "field"]
    assert header[6:] == ["A1", "A2"]
    first = [r for r in rows if r[0] == str(extra.pk)]
    assert [r[4] for r in first] == ["evidence:1", "evidence:2", "item"]
    assert first[2][6:] == ["supported", "supported"]
    new = [r for r in rows if r[0] == str(item.pk)]
    assert new and new[0][6:] == [exports.NO_ANSWER, exports.NOT_ASSIGNED]
    named, _ = exports.wide_rows(alpha, real_names=True)
    assert named[6:] == ["bob", "carol"]


def test_a_domain_with_nothing_scored_has_no_k_and_no_veriscore() -> None:
    from annotation.reports.pipeline_scores import _score_tables
    from pipeline.score import Counted, score_results

    only_abstained = Counted.of_labels(("a", "model-x", "Wiki", True, "e"), [], 0)
    scored = Counted.of_labels(("b", "model-x", "Bio", False, "e"), ["supported", "unsupported"], 2)
    tables = _score_tables("v", "e", score_results([only_abstained, scored]))
    wide = {r["model"]: r for r in tables[0].as_dicts()}
    assert wide["K"]["Wiki"] is None and wide["K"]["Bio"] == 2
    assert wide["model-x"]["Wiki"] is None and wide["model-x"]["Bio"] == pytest.approx(50.0)
    detail = {r["domain"]: r for r in tables[1].as_dicts()}
    assert detail["Wiki"]["VERIScore"] is None and detail["Wiki"]["precision"] is None


def test_p_e_is_shown_only_where_a_chance_term_applies(verification: list[Item]) -> None:
    """Percent agreement subtracts no chance agreement: its p_e cell is empty (it
    printed 0.000), while the chance-corrected coefficients keep theirs."""
    report = reports.build_report(verification[0].project, bootstrap=0)
    table = report.table("agreement-verification-label-coefficients")
    rows = {r["coefficient"]: r for r in table.as_dicts()}
    assert rows["Percent agreement"]["p_e"] is None
    assert rows["Fleiss' kappa"]["p_e"] == pytest.approx(22 / 64)
    shown = dict(
        zip([r["coefficient"] for r in table.as_dicts()], table.display_rows(), strict=True)
    )
    assert shown["Percent agreement"][table.columns.index("p_e")] == "–"


def test_a_value_that_rounds_to_zero_prints_without_a_minus_sign() -> None:
    """Conger's kappa printed "-0.000" on the report page and in LaTeX."""
    table = reports.tables.Table(
        "t", "T", ("coefficient", "value"), (("Conger's kappa", -1e-12), ("x", -0.0004))
    )
    assert table.display_rows() == [["Conger's kappa", "0.000"], ["x", "0.000"]]
    assert "-0.000" not in reports.tables.table_latex(table)
    signed = reports.tables.Table("s", "S", ("value",), ((-0.0006,),))
    assert signed.display_rows() == [["-0.001"]]


def test_judgements_on_two_lists_without_a_claim_leave_the_preference(
    judged_comparisons: list[Item],
) -> None:
    """Both lists of an item empty (or abstained): 'List 1 (no claims) / List 2 (no
    claims)' had to be answered and counted in the preference table."""
    from annotation.models import Claim

    empty = judged_comparisons[0]
    Claim.objects.filter(claim_list__in=[empty.list_a, empty.list_b]).delete()
    report = reports.build_report(empty.project, bootstrap=0)
    overall = next(r for r in report.table("preference").as_dicts() if r["domain"] == "all")
    assert overall["judgements"] == 6  # 8 less the item's two
    section = report.section("preference")
    assert section is not None
    assert any(
        n.startswith("2 judgement(s) on items whose two lists have no claim") for n in section.notes
    )


def test_no_comparison_item_for_two_lists_without_a_claim_unless_asked(
    alpha_items: list[Item],
) -> None:
    from annotation.kinds.comparison import comparison_items
    from annotation.models import Claim, System

    project = alpha_items[0].project
    empty = alpha_items[0]
    Claim.objects.filter(claim_list__in=[empty.list_a, empty.list_b]).delete()
    Item.objects.filter(project=project).delete()
    a = System.objects.get(project=project, name=SYSTEM_A)
    b = System.objects.get(project=project, name=SYSTEM_B)
    made = comparison_items(project=project, system_a=a, system_b=b)
    assert len(made) == 3 and empty.document_id not in {i.document_id for i in made}
    again = comparison_items(project=project, system_a=a, system_b=b, include_empty=True)
    assert [i.document_id for i in again] == [empty.document_id]


def test_table_csv_writes_what_safecsv_writes_cell_by_cell() -> None:
    # table_csv checks each column's distinct values: the same file as safecsv.writer
    rng = random.Random(0)
    pool: list[reports.Cell] = [
        "ok",
        "=cmd",
        "-0.25",
        "-x",
        "+1e5",
        "@a",
        "\tx",
        "\rz",
        "",
        "a,b",
        'q"',
        "a\nb",
    ]
    pool += [None, 1, -2, 0.5, float("nan"), -0.0, True]
    for _ in range(200):
        width, height = rng.randint(1, 5), rng.randint(0, 20)
        rows = tuple(tuple(rng.choice(pool) for _ in range(width)) for _ in range(height))
        table = reports.Table("t", "T", ("=head", *(f"c{i}" for i in range(1, width))), rows)
        out = io.StringIO()
        writer = safecsv.writer(out)
        writer.writerow(table.columns)
        writer.writerows([["" if v is None else v for v in row] for row in rows])
        assert reports.table_csv(table) == out.getvalue(), rows


@pytest.mark.parametrize(
    "rows",
    [
        (),  # the "No rows." line
        (("<b>A&B</b>", 0.5, None), ('it\'s "quoted"', -1e-12, 3)),
        tuple((f"u{i}", i / 7, i) for i in range(150)),  # more than the page shows
    ],
)
def test_a_tables_page_body_is_what_the_template_loop_wrote(rows: tuple) -> None:
    """Table.page_body replaced the template's loop over page_rows (a node per cell):
    the same HTML, every cell escaped, compared with that loop rendered by Django."""
    from django.template import Context, Template

    table = reports.tables.Table("t", "T", ("name", "value", "n"), rows)
    loop = Template(
        "{% for row in t.page_rows %}<tr>{% for v in row %}<td>{{ v }}</td>{% endfor %}</tr>"
        '{% empty %}<tr><td colspan="{{ t.columns|length }}">No rows.</td></tr>{% endfor %}'
    )
    assert table.page_body == loop.render(Context({"t": table}))
    assert "<b>" not in table.page_body
    assert table.shown == min(len(rows), reports.tables.DISPLAY_LIMIT)


def test_a_domain_filter_keeps_the_pipeline_rows_of_that_domain(
    verification: list[Item],
) -> None:
    """The pipeline section reads the report's verdicts once (ReportData.verdicts) and
    applies the domain filter through the lists it scores: a domain's detail rows are
    those of the unfiltered report, and the other domain's are gone."""
    project = verification[0].project
    whole = reports.build_report(project, bootstrap=0)
    only = reports.build_report(project, bootstrap=0, filters=reports.Filters(domains=("ELI5",)))
    for verifier in ("one", "two"):
        name = f"veriscore-verifier-{verifier}-extractor-v-detail"
        all_rows = whole.table(name).as_dicts()
        assert {r["domain"] for r in all_rows} == {"Biography", "ELI5"}
        assert only.table(name).as_dicts() == [r for r in all_rows if r["domain"] == "ELI5"]
    nothing = reports.build_report(
        project, bootstrap=0, filters=reports.Filters(domains=("no such domain",))
    )
    assert nothing.section("pipeline") is None and nothing.section("score-vs-score") is None
