"""The `factscore` report table: FActScore's human-label rule, and the paper's numbers."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation import reports
from annotation.ingest import FACTSCORE_HUMAN, FACTSCORE_LABELS, import_file
from annotation.models import Claim, Project
from annotation.reports.factscore_table import VerdictSet, factscore_rows_of, system_verdict_sets
from annotation.reports.queries import ReportData
from tests.conftest import peer_file


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="factscore")


def fact(text: str, label: str | None = None) -> dict[str, str]:
    return {"text": text, "label": label} if label else {"text": text}


# Response A: 2 S, 1 NS, 1 IR, and an irrelevant sentence with 2 model facts -> 2 / 6.
# Response B: 1 S of 1 -> 1. Response C abstains. FActScore = (1/3 + 1) / 2.
ROWS = [
    {
        "input": "Question: Tell me a bio of A.",
        "output": "A. B. C.",
        "topic": "A",
        "annotations": [
            {
                "text": "A.",
                "is-relevant": True,
                "model-atomic-facts": [fact("a1"), fact("a2")],
                "human-atomic-facts": [fact("a1", "S"), fact("a2", "S"), fact("a3", "NS")],
            },
            {
                "text": "B.",
                "is-relevant": False,
                "model-atomic-facts": [fact("b1"), fact("b2")],
                "human-atomic-facts": None,
            },
            {
                "text": "C.",
                "is-relevant": True,
                "model-atomic-facts": [fact("c1")],
                "human-atomic-facts": [fact("c1", "IR")],
            },
        ],
    },
    {
        "input": "Question: Tell me a bio of B.",
        "output": "B.",
        "topic": "B",
        "annotations": [
            {
                "text": "B.",
                "is-relevant": True,
                "model-atomic-facts": [fact("b")],
                "human-atomic-facts": [fact("b", "S")],
            }
        ],
    },
    {
        "input": "Question: Tell me a bio of C.",
        "output": "I do not know.",
        "topic": "C",
        "annotations": None,
    },
]


def test_the_human_label_rule_on_a_worked_example(project: Project) -> None:
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    [labels] = system_verdict_sets(project)
    assert labels.name == FACTSCORE_LABELS
    [row] = factscore_rows_of(project, [labels])
    assert (row.facts_from, row.source_model, row.responses, row.responding) == (
        FACTSCORE_HUMAN,
        "M",
        3,
        2,
    )
    assert row.facts_per_response == pytest.approx((6 + 1) / 2)
    assert row.factscore == pytest.approx(100 * (2 / 6 + 1) / 2)


def test_any_verdict_set_on_atomic_facts_gives_a_row(project: Project) -> None:
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    model_facts = Claim.objects.filter(claim_list__system__name="factscore-model-facts").order_by(
        "pk"
    )
    verifier = VerdictSet(
        "a verifier", {c.pk: "S" if c.text.startswith("a") else "NS" for c in model_facts}
    )
    [row] = factscore_rows_of(project, [verifier])
    # model facts: A has a1 a2 (S) b1 b2 c1 (NS) -> 2/5; B has b (NS) -> 0
    assert row.facts_from == "factscore-model-facts" and row.factscore == pytest.approx(
        100 * (2 / 5 + 0) / 2
    )


def test_a_set_that_labels_some_responses_scores_only_those(project: Project) -> None:
    """The annotators' gold labels part way through: one response of M labelled. The row
    scored every response of the system (an unlabelled one counted 0, or only its
    irrelevant facts); a source model with no labelled response got a row of its own."""
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="Other.jsonl")
    human = Claim.objects.filter(
        claim_list__system__name=FACTSCORE_HUMAN, claim_list__document__source_model="M"
    ).order_by("pk")
    first = human.first()
    assert first is not None
    only_one = {c.pk: "S" for c in human.filter(claim_list=first.claim_list)}
    [row] = factscore_rows_of(project, [VerdictSet("gold so far", only_one)])
    assert (row.source_model, row.responses, row.responding, row.labelled) == ("M", 3, 2, 1)
    # response A: its 4 human facts, all S here, and the 2 model facts of its irrelevant
    # sentence (the human-label rule) -> 4 / 6; B, unlabelled, is left out (it scored 0)
    assert len(only_one) == 4 and row.facts_per_response == pytest.approx(6)
    assert row.factscore == pytest.approx(100 * 4 / 6)


@pytest.mark.slow
def test_the_table_reproduces_factscore_on_the_three_released_files(project: Project) -> None:
    for name in ("InstructGPT", "ChatGPT", "PerplexityAI"):
        path = peer_file(f"factscore_labeled/{name}.jsonl")
        import_file(project=project, text=path.read_bytes(), file=path.name)
    report = reports.build_report(project, bootstrap=0, with_charts=False)
    rows = {r["source model"]: r for r in report.table("factscore").as_dicts()}
    assert {m: round(r["FActScore"], 1) for m, r in rows.items()} == pytest.approx(
        {"InstructGPT": 42.5, "ChatGPT": 58.3, "PerplexityAI": 71.5}, abs=0.2
    )
    assert {m: round(r["% responding"], 1) for m, r in rows.items()} == {
        "InstructGPT": 99.5,
        "ChatGPT": 85.8,
        "PerplexityAI": 90.7,
    }
    out = StringIO()
    call_command(
        "agreement_report",
        str(project.pk),
        "--table",
        "factscore",
        "--format",
        "csv",
        "--bootstrap",
        "0",
        stdout=out,
    )
    assert out.getvalue().splitlines()[0] == (
        "verdict set,facts from,source model,responses,% responding,"
        "labelled responses,facts per responding response,FActScore"
    )


def test_the_report_page_and_api_show_the_table(alpha: Project, users: dict[str, object]) -> None:
    from django.test import Client
    from django.urls import reverse

    from tests.annotation.api_helpers import token_client

    import_file(project=alpha, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    client = Client()
    client.force_login(users["alice"])  # type: ignore[arg-type]
    page = client.get(reverse("report", args=[alpha.pk]) + "?bootstrap=0").content.decode()
    assert "FActScore per source model" in page and "66.7" in page
    csv = client.get(reverse("report_table", args=[alpha.pk, "factscore", "csv"]) + "?bootstrap=0")
    assert csv.status_code == 200 and "factscore-human-labels,factscore-human-facts,M,3," in (
        csv.content.decode()
    )
    body = token_client(users["alice"]).get(f"/api/projects/{alpha.pk}/report/?bootstrap=0").json()
    [section] = [s for s in body["sections"] if s["slug"] == "factscore"]
    assert section["tables"][0]["name"] == "factscore"


def test_the_table_reads_the_annotators_gold_labels_of_atomic_facts(
    alpha: Project, users: dict[str, object]
) -> None:
    """Atomic-fact items on the human facts, labelled by two annotators as FActScore's
    annotators did: the gold labels give a row with the same FActScore as the released labels."""
    from annotation.kinds.atomic import atomic_items
    from annotation.models import Assignment, System, Verdict, assign
    from annotation.reports.factscore_table import GOLD

    import_file(project=alpha, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    items = atomic_items(
        project=alpha, system=System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    )
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    published = dict(
        Verdict.objects.filter(system__name=FACTSCORE_LABELS).values_list("claim_id", "label")
    )
    ours = {"S": "supported", "NS": "not-supported", "IR": "irrelevant"}
    for a in Assignment.objects.filter(item__in=items):
        values = {
            (f"fact:{c.position}", "label"): ours[published[c.pk]]
            for c in a.item.list_a.claims.all()
        }  # type: ignore[union-attr]
        assert a.submit(values, guideline_version=1)
    report = reports.build_report(alpha, bootstrap=0, with_charts=False)
    rows = {r["verdict set"]: r for r in report.table("factscore").as_dicts()}
    assert set(rows) == {FACTSCORE_LABELS, GOLD}
    assert rows[GOLD]["FActScore"] == pytest.approx(100 * (2 / 6 + 1) / 2)
    assert rows[GOLD]["FActScore"] == rows[FACTSCORE_LABELS]["FActScore"]


def _labelled_atomic(alpha: Project) -> list[object]:
    """Atomic-fact items on the human facts for bob and carol, with a disagreement on
    every first item's fact 1 (a tie) and an adjudication on the first item's fact 2."""
    from annotation.kinds.atomic import atomic_items
    from annotation.models import Adjudication, Assignment, System, assign

    import_file(project=alpha, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    items = atomic_items(
        project=alpha, system=System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    )
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    labels = ["supported", "not-supported", "irrelevant"]
    for n, a in enumerate(Assignment.objects.filter(item__in=items).order_by("pk")):
        values = {
            (f"fact:{c.position}", "label"): labels[(c.position + n * (c.position == 1)) % 3]
            for c in a.item.list_a.claims.all()  # type: ignore[union-attr]
        }
        assert a.submit(values, guideline_version=1)
    Adjudication.objects.create(item=items[0], unit="fact:2", field="label", value="supported")
    return list(items)


def _data(alpha: Project, filters: object) -> ReportData:
    from annotation.reports.queries import report_data

    return report_data(
        alpha,
        filters=filters,  # type: ignore[arg-type]
        names={},
        bootstrap=0,
        seed=0,
        k_rule="",
        with_charts=False,
    )


def test_report_data_holds_the_answers_of_label_rows_and_the_golds_of_gold_values(
    alpha: Project, users: dict[str, object]
) -> None:
    """ReportData's answer codes say what label_rows lists, and its golds are those of
    gold_values on the verdict fields (a tie and an adjudication among them)."""
    from annotation.gold import gold_values, label_rows
    from annotation.reports.tables import Filters

    _labelled_atomic(alpha)
    data = _data(alpha, Filters())
    expected: dict[tuple[int, str, str], dict[int, str]] = {}
    for r in label_rows(alpha):
        expected.setdefault((r.item, r.unit, r.field), {})[r.annotator] = r.value
    found: dict[tuple[int, str, str], dict[int, str]] = {}
    for codes in data.answers.fields.values():
        for key, row in zip(codes.keys(), codes.row_of.tolist(), strict=True):
            found[key] = codes.answers(row)
    assert found == expected
    golds = [g for gs in data.golds_of.values() for g in gs]
    assert {g.provenance for g in golds} >= {"adjudicated", "tie", "unanimous"}
    assert golds == [g for g in gold_values(alpha) if g.field == "label"]


def test_an_unfiltered_report_gives_the_gold_row_its_golds_as_a_query_would(
    alpha: Project, users: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The FActScore section reads an unfiltered report's golds instead of querying the
    answers again: the same labels as the query, with a disagreement, a tie and an
    adjudication; a filtered report (filters do not apply there) still queries them."""
    from annotation import gold
    from annotation.models import Assignment
    from annotation.reports.factscore_table import GOLD, gold_verdict_set
    from annotation.reports.tables import Filters

    items = _labelled_atomic(alpha)
    queried = gold_verdict_set(alpha)
    assert queried is not None and len(queried.labels) >= 3
    assert gold_verdict_set(alpha, _data(alpha, Filters()).golds_of) == queried
    one = Filters(annotators=(Assignment.objects.filter(item__in=items).first().annotator_id,))  # type: ignore[union-attr]
    queries: list[object] = []  # the real read_answers, counted when gold_values calls it
    real = gold.read_answers

    def counted(*args: object, **kwargs: object) -> object:
        queries.append(kwargs)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gold, "read_answers", counted)
    unfiltered = reports.build_report(alpha, bootstrap=0, with_charts=False)
    assert queries == []
    filtered = reports.build_report(alpha, bootstrap=0, with_charts=False, filters=one)
    assert queries == [{"kind": "atomic"}]
    [gold_row] = [r for r in unfiltered.table("factscore").as_dicts() if r["verdict set"] == GOLD]
    assert gold_row in filtered.table("factscore").as_dicts()


def test_documents_as_a_query_give_the_rows_of_their_ids(project: Project) -> None:
    """The report's domain filter passes its documents as a subquery (not thousands of
    ids): the same rows as the list of their ids, and only theirs."""
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="M.jsonl")
    import_file(project=project, text="\n".join(json.dumps(r) for r in ROWS), file="Other.jsonl")
    [labels] = system_verdict_sets(project)
    only_m = project.documents.filter(source_model="M")
    as_query = factscore_rows_of(project, [labels], only_m)
    assert as_query == factscore_rows_of(
        project, [labels], list(only_m.values_list("pk", flat=True))
    )
    assert [r.source_model for r in as_query] == ["M"]
    assert len(factscore_rows_of(project, [labels])) == 2
