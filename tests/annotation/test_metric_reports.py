"""The metric-against-metric report sections on small hand-built projects; expected
numbers are worked out in the comments."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import reports
from annotation.ingest import import_file
from annotation.models import Item, Membership, Project

NAMES = {"d1": "Ada Lovelace", "d2": "Alan Turing", "d3": "Grace Hopper", "d4": "Emmy Noether"}
MODELS = {"d1": "m1", "d2": "m1", "d3": "m2", "d4": "m3"}
# FActScore-style human labels ("ref") and a verifier ("v1") on ext-a's two claims.
REF = {"d1": ("S", "S"), "d2": ("S", "NS"), "d3": ("NS", "NS"), "d4": ("S", "IR")}
V1 = {
    "d1": ("supported", "supported"),
    "d2": ("unsupported", "unsupported"),
    "d3": ("supported", "unsupported"),
    "d4": ("supported", "supported"),
}


def record(doc: str) -> str:
    name = NAMES[doc]
    claims_a = [
        {
            "text": f"{name} was a mathematician.",
            "sentence_index": 0,
            "verdicts": {"ref": REF[doc][0], "v1": V1[doc][0]},
        },
        {
            "text": f"{name} was born in 1815.",
            "sentence_index": 1,
            "verdicts": {"ref": REF[doc][1], "v1": V1[doc][1]},
        },
    ]
    lists: dict[str, object] = {"ext-a": claims_a}
    if doc == "d1":  # sentence-aligned: sentence 0 the same, sentence 1 shorter
        lists["ext-b"] = [
            {"text": f"{name} was a mathematician.", "sentence_index": 0},
            {"text": "Ada was born in 1815.", "sentence_index": 1},
        ]
    if doc == "d2":  # a flat list: compared per document
        lists["ext-b"] = [f"{name} was a mathematician and born in 1912."]
    return json.dumps(
        {
            "id": doc,
            "question": f"Tell me a bio of {name}.",
            "domain": "Biography",
            "response": f"{name} was a mathematician. She was born in 1815.",
            "source_model": MODELS[doc],
            "claim_lists": lists,
        }
    )


@pytest.fixture
def gamma(users: dict[str, User]) -> Project:
    project = Project.objects.create(name="gamma")
    project.add_member(users["alice"], Membership.RESEARCHER)
    project.add_member(users["bob"], Membership.ANNOTATOR)
    import_file(project=project, text="\n".join(record(d) for d in NAMES), file="gamma.jsonl")
    return project


def rows(report: reports.Report, table: str) -> list[dict[str, object]]:
    return report.table(table).as_dicts()


def test_two_extractors_are_compared_per_sentence_or_per_document(gamma: Project) -> None:
    report = reports.build_report(gamma, bootstrap=0, with_charts=False)
    by_unit = {r["unit"]: r for r in rows(report, "extractor-similarity")}
    sentence = by_unit["sentence"]
    assert (sentence["system A"], sentence["system B"]) == ("ext-a", "ext-b")
    assert (sentence["documents"], sentence["units"], sentence["units both empty"]) == (1, 2, 0)
    assert sentence["exact match"] == pytest.approx(1 / 2)
    # Sentence 1: "ada lovelace was born in 1815" vs "ada was born in 1815", LCS 5: 10/11.
    assert sentence["ROUGE-L F1"] == pytest.approx((1 + 10 / 11) / 2)
    assert sentence["A claims per unit"] == sentence["B claims per unit"] == 1.0
    document = by_unit["document"]
    assert (document["documents"], document["units"], document["exact match"]) == (1, 1, 0.0)
    # "alan turing was a mathematician alan turing was born in 1815" (11 tokens) vs
    # "alan turing was a mathematician and born in 1912" (9): LCS 7 (..., born, in).
    assert document["ROUGE-L F1"] == pytest.approx(2 * 7 / (11 + 9))


def test_claims_per_sentence_and_empty_sentences_per_extractor(gamma: Project) -> None:
    report = reports.build_report(gamma, bootstrap=0, with_charts=False)
    by = {(r["system"], r["domain"]): r for r in rows(report, "claims-per-sentence")}
    a = by[("ext-a", "Biography")]
    assert (a["responses"], a["sentences"], a["claims"]) == (4, 8, 8)
    assert a["claims per sentence"] == 1.0 and a["sentences with no claim %"] == 0.0
    b = by[("ext-b", "Biography")]
    # d1: 2 claims / 2 sentences; d2: 1 claim / 2 sentences (flat, no empty-sentence count).
    assert b["claims per sentence"] == pytest.approx((1 + 1 / 2) / 2)
    assert b["sentence-aligned responses"] == 1 and b["sentences with no claim %"] == 0.0


def test_scores_are_correlated_per_example_and_per_source_model(gamma: Project) -> None:
    report = reports.build_report(gamma, bootstrap=300, seed=1)
    systems = {r["score"]: r for r in rows(report, "score-systems")}
    fs_ref, fs_v1 = "FActScore: ref on ext-a", "FActScore: v1 on ext-a"
    assert systems[fs_ref]["responses scored"] == 4
    # ref: 1, 1/2, 0, 1 (IR left out); v1: 1, 0, 1/2, 1.
    assert systems[fs_ref]["mean score"] == pytest.approx(2.5 / 4)
    correlations = {
        (r["score A"], r["score B"], r["level"]): r for r in rows(report, "score-correlations")
    }
    example = correlations[(fs_ref, fs_v1, "example")]
    # Deviations from 5/8: x 3, -1, -5, 3 and y 3, -5, -1, 3 (eighths): r = 28 / 44.
    assert example["n"] == 4 and example["Pearson r"] == pytest.approx(7 / 11)
    assert example["r CI low"] <= example["Pearson r"] <= example["r CI high"]
    system = correlations[(fs_ref, fs_v1, "system: source model")]
    # Means per model (m1, m2, m3): x 3/4, 0, 1 and y 1/2, 1/2, 1.
    assert system["n"] == 3 and system["Pearson r"] == pytest.approx(30 / math.sqrt(78 * 24))
    assert system["Kendall tau"] is not None and system["note"] == ""
    per_model = {
        (r["score"], r["grouping"], r["system"]): r["mean score"]
        for r in rows(report, "score-per-model")
    }
    assert per_model[(fs_ref, "all", "m1")] == pytest.approx(3 / 4)
    assert per_model[(fs_ref, "by domain", "m1 / Biography")] == pytest.approx(3 / 4)
    # F1@K with K = 2 for every response; d4's irrelevant fact is left out: P 1, R 1/2.
    f1 = {
        r["system"]: r["mean score"]
        for r in rows(report, "score-per-model")
        if r["score"] == "F1@K: ref on ext-a" and r["grouping"] == "all"
    }
    assert f1["m3"] == pytest.approx(2 / 3)
    section = report.section("score-vs-score")
    assert section is not None and any("<svg" in c.svg for c in section.charts)


def test_a_domain_filter_applies_to_both_sections(gamma: Project) -> None:
    report = reports.build_report(
        gamma, filters=reports.Filters(domains=("ELI5",)), bootstrap=0, with_charts=False
    )
    assert report.section("extractor-vs-extractor") is None
    assert report.section("score-vs-score") is None


def test_annotators_gold_labels_score_fully_labelled_responses(
    verification: list[Item], users: dict[str, User]
) -> None:
    project = verification[0].project
    report = reports.build_report(project, bootstrap=0, with_charts=False)
    name = "FActScore: annotators (gold) on extractor-v"
    assert {r["score"]: r for r in rows(report, "score-systems")}[name]["responses scored"] == 2
    # Gold: vdoc-0 supported + tie (inconclusive) = 1/2; vdoc-1 contradicted + inconclusive = 0.
    means = {
        (r["score"], r["grouping"], r["system"]): r["mean score"]
        for r in rows(report, "score-per-model")
    }
    assert means[(name, "all", "model-x")] == pytest.approx(0.25)
    # Two responses: nothing to correlate, and the table says why.
    notes = {r["note"] for r in rows(report, "score-correlations") if r["level"] == "example"}
    assert notes == {"undefined because fewer than 3 examples"}
    # Bob alone labelled vdoc-0 supported, supported: 1.
    bob = reports.build_report(
        project,
        filters=reports.Filters(annotators=(users["bob"].pk,)),
        bootstrap=0,
        with_charts=False,
    )
    means = {
        (r["score"], r["system"]): r["mean score"]
        for r in rows(bob, "score-per-model")
        if r["grouping"] == "all"
    }
    assert means[(name, "model-x")] == pytest.approx(0.5)
    # Without a gold label on one of its claims, vdoc-1 is no longer scored from gold.
    verification[3].delete()
    report = reports.build_report(project, bootstrap=0, with_charts=False)
    assert {r["score"]: r for r in rows(report, "score-systems")}[name]["responses scored"] == 1


def test_flat_lists_of_the_alpha_fixture_are_compared_per_document(alpha: Project) -> None:
    report = reports.build_report(alpha, bootstrap=0, with_charts=False)
    [row] = rows(report, "extractor-similarity")
    assert row["unit"] == "document" and row["documents"] == 4 and row["exact match"] == 0.0
    # "person 0 was born in 1900 person 0 was a painter" (11) vs
    # "person 0 was a painter born in 1900" (8): LCS 6.
    assert row["ROUGE-L F1"] == pytest.approx(12 / 19)


def test_the_tables_export_to_researchers_only(
    client: Client, gamma: Project, users: dict[str, User]
) -> None:
    client.force_login(users["bob"])
    url = reverse("report_table", args=[gamma.pk, "score-correlations", "csv"])
    assert client.get(url).status_code == 404
    client.force_login(users["alice"])
    body = client.get(url, {"bootstrap": "0"}).content.decode()
    assert list(csv.DictReader(io.StringIO(body)))[0]["level"] == "example"
    tex = client.get(
        reverse("report_table", args=[gamma.pk, "extractor-similarity", "tex"]), {"bootstrap": "0"}
    ).content.decode()
    assert r"\toprule" in tex and "ROUGE-L F1" in tex
    page = client.get(reverse("report", args=[gamma.pk]), {"bootstrap": "0"}).content.decode()
    assert "Extractor against extractor" in page and "Score against score" in page
    html = client.get(reverse("report_html", args=[gamma.pk]), {"bootstrap": "0"})
    assert "Score against score" in html.content.decode()


def test_api_and_command_carry_the_sections(
    client: Client, gamma: Project, users: dict[str, User], capsys
) -> None:  # type: ignore[no-untyped-def]
    client.force_login(users["alice"])
    data = client.get(f"/api/projects/{gamma.pk}/report/", {"bootstrap": "0"}).json()
    slugs = [s["slug"] for s in data["sections"]]
    assert "extractor-vs-extractor" in slugs and "score-vs-score" in slugs
    call_command("agreement_report", "gamma", "--list-tables", "--bootstrap", "0")
    listed = capsys.readouterr().out.split()
    assert {"extractor-similarity", "claims-per-sentence", "score-correlations"} <= set(listed)
