"""Any other layout through a mapping file of JMESPath expressions: FELM's combined file
and an invented nested claim-level benchmark, as docs/researchers/importing.md shows them;
parallel lists paired by zip(); every key checked; no claim list, abstentions and
left-out records; errors naming where in the source record the value is; the dry run."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils.html import escape

from annotation.ingest import FACTSCORE_HUMAN, ImportFailed, import_file
from annotation.models import Claim, ClaimList, Document, Project, Segment, System
from tests.conftest import canonical_line, peer_file

from .api_helpers import token_client

DATA = Path(__file__).parent / "data" / "mapping"


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="mapped")


def test_felm_combined_file_through_its_mapping(project: Project) -> None:
    out = io.StringIO()
    call_command(
        "import_data",
        "mapped",
        str(DATA / "felm_combined.jsonl"),
        "--mapping",
        str(DATA / "felm_combined.yaml"),
        stdout=out,
    )
    assert "mapping: 2 new document(s)" in out.getvalue()
    doc = Document.objects.get(external_id="felm:science:0")
    assert (doc.question, doc.domain, doc.source_model) == (
        "Why is the sky blue?",
        "science",
        "chatgpt",
    )
    segments = Segment.objects.filter(document=doc).order_by("position")
    assert [(s.text, [v.label for v in s.verdicts.all()]) for s in segments] == [
        ("Rayleigh scattering.", ["true"]),
        ("Blue light scatters less.", ["false"]),
    ]
    assert System.objects.get(name="felm-labels").kind == System.REFERENCE
    assert Document.objects.filter(external_id="felm:math:0").exists()


def test_a_nested_benchmark_through_its_mapping(project: Project) -> None:
    summary = import_file(
        project=project,
        path=DATA / "nested_claims.jsonl",
        file="nested_claims.jsonl",
        mapping=(DATA / "nested_claims.yaml").read_text(),
    )
    assert summary.documents_created == 2 and summary.claims_created == 3
    doc = Document.objects.get(external_id="q1")
    assert (doc.domain, doc.source_model) == ("art", "model-z")
    claims = list(Claim.objects.filter(claim_list__document=doc).order_by("position"))
    assert [(c.text, c.sentence_index, c.sentence) for c in claims] == [
        ("Leonardo da Vinci painted the Mona Lisa.", 0, "Leonardo da Vinci painted it."),
        ("Leonardo finished the Mona Lisa in 1700.", 1, "He finished it in 1700."),
    ]
    assert [[v.label for v in c.verdicts.all()] for c in claims] == [
        ["supported"],
        ["contradicted"],
    ]
    assert [(e.title, e.link) for e in claims[1].evidence.all()] == [
        ("Leonardo", "https://en.wikipedia.org/wiki/Leonardo_da_Vinci"),
        ("Paris", "https://example.org/paris"),
    ]
    assert doc.metadata["evidence_stances"] == {
        "nested-bench-claims": [["supports"], ["contradicts", "inconclusive"]]
    }
    assert any("evidence stances have no column" in w.message for w in summary.warnings)
    assert System.objects.get(name="nested-bench-labels").kind == System.REFERENCE


def test_an_expression_that_finds_nothing_names_itself_and_the_line(project: Project) -> None:
    mapping = "id: uid\nresponse: answer.txt\n"
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=project,
            path=DATA / "nested_claims.jsonl",
            file="nested_claims.jsonl",
            mapping=mapping,
        )
    assert (
        "nested_claims.jsonl, line 1, field 'response': the expression 'answer.txt' found nothing"
    ) in str(e.value)
    assert Document.objects.count() == 0


def test_an_unmapped_label_and_a_bad_expression_are_errors(project: Project) -> None:
    mapping = (DATA / "nested_claims.yaml").read_text().replace("  unknown: inconclusive\n", "")
    with pytest.raises(
        ImportFailed,
        match=re.escape(
            "line 2, field 'claims.label': at answer.sentences[0].claims[0].verdict: "
            "label 'unknown' is not in the mapping's values"
        ),
    ):
        import_file(
            project=project,
            text=(DATA / "nested_claims.jsonl").read_text(),
            file="nested_claims.jsonl",
            mapping=mapping,
        )
    with pytest.raises(ImportFailed, match=r"my.yaml, field 'question': is not a JMESPath"):
        import_file(
            project=project,
            text=json.dumps({"r": "x"}) + "\n",
            file="f.jsonl",
            mapping="response: r\nquestion: 'a[['\n",
            mapping_file="my.yaml",
        )
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("response: r\nclaims: text\n", "m.yaml, field 'claims': must be a mapping"),
        ("response: r\nclaims: {evidence: e}\n", "field 'claims.evidence': must be a mapping"),
        ("response: r\nvalues: [a]\n", "field 'values': must be a mapping"),
        ("response: r\nanswer: a\n", "field 'answer': is not a mapping key"),
        ("[1, 2]\n", "field 'response': the mapping must say where it is"),
        ("response: [r\n", "m.yaml: not valid YAML or JSON"),
    ],
)
def test_a_malformed_mapping_is_an_error_naming_the_key(
    project: Project, mapping: str, message: str
) -> None:
    with pytest.raises(ImportFailed, match=re.escape(message)):
        import_file(
            project=project,
            text='{"r": "x"}\n',
            file="f.jsonl",
            mapping=mapping,
            mapping_file="m.yaml",
        )
    assert Document.objects.count() == 0


def mapped_import(project: Project, rows: list[dict[str, Any]], mapping: str) -> Any:
    return import_file(
        project=project,
        text="\n".join(json.dumps(r) for r in rows),
        file="bench.jsonl",
        mapping=mapping,
        mapping_file="bench.yaml",
    )


def errors_of(project: Project, rows: list[dict[str, Any]], mapping: str) -> list[str]:
    with pytest.raises(ImportFailed) as e:
        mapped_import(project, rows, mapping)
    assert Document.objects.count() == 0
    return [str(err) for err in e.value.errors]


PARALLEL = (DATA / "parallel_claims.yaml").read_text()


def test_parallel_lists_are_paired_by_zip(project: Project) -> None:
    rows = [json.loads(x) for x in (DATA / "parallel_claims.jsonl").read_text().splitlines()]
    summary = mapped_import(project, rows, PARALLEL)
    assert summary.claims_created == 3 and summary.warnings == []
    claims = Claim.objects.filter(claim_list__document__external_id="a").order_by("position")
    assert [(c.text, c.verdicts.get().label) for c in claims] == [
        ("A.", "supported"),
        ("B.", "contradicted"),
        ("C.", "supported"),
    ]
    empty = ClaimList.objects.get(document__external_id="b")
    assert (empty.claims.count(), empty.abstained) == (0, False)


def test_zip_of_lists_of_two_lengths_is_an_error_naming_the_line(project: Project) -> None:
    rows = [{"id": "a", "response": "A. B.", "claims": ["A.", "B."], "claim_labels": [True]}]
    (error,) = errors_of(project, rows, PARALLEL)
    assert error.startswith(
        "bench.jsonl, line 1, field 'claims.items': at zip(claims, claim_labels)"
    )
    assert "lists of one length; these have 2, 1 items" in error


def test_every_unknown_key_at_every_level_is_refused_with_its_path(project: Project) -> None:
    mapping = PARALLEL.replace("  label:", "  label_list:") + (
        "segments: {items: s, text: '@', colour: c}\nanswer: a\n"
    )
    mapping = mapping.replace("  items: zip", "  evidence: {items: e, url: u}\n  items: zip")
    with pytest.raises(ImportFailed) as e:
        mapped_import(project, [{"id": "a", "response": "A."}], mapping)
    fields = [(err.file, err.field) for err in e.value.errors]
    assert fields == [
        ("bench.yaml", "claims.evidence.url"),
        ("bench.yaml", "claims.label_list"),
        ("bench.yaml", "segments.colour"),
        ("bench.yaml", "answer"),
    ]
    assert all("is not a mapping key (" in err.message for err in e.value.errors)


NO_LIST = """\
id: id
response: response
skip: draft
claims: {system: x, abstained: abstained, items: claims, text: "@"}
"""


def test_no_claim_list_an_abstention_and_a_left_out_record(project: Project) -> None:
    rows = [
        {"id": "listed", "response": "A.", "claims": ["A."]},
        {"id": "none-found", "response": "B.", "claims": []},
        {"id": "no-list", "response": "C."},
        {"id": "abstained", "response": "", "abstained": True},
        {"id": "draft", "response": "E.", "claims": ["E."], "draft": True},
        {"id": "draft-2", "draft": "yes"},
    ]
    summary = mapped_import(project, rows, NO_LIST)
    assert sorted(Document.objects.values_list("external_id", flat=True)) == [
        "abstained",
        "listed",
        "no-list",
        "none-found",
    ]
    lists = {
        cl.document.external_id: (cl.claims.count(), cl.abstained)
        for cl in ClaimList.objects.select_related("document")
    }
    assert lists == {"listed": (1, False), "none-found": (0, False), "abstained": (0, True)}
    warnings = [str(w) for w in summary.warnings]
    assert (
        "bench.jsonl, line 5, field 'skip': 2 record(s) left out, where 'draft' is true "
        "(the first here)"
    ) in warnings
    assert any("'claims' found nothing" in w for w in warnings)


def test_an_empty_response_is_refused_unless_abstained_and_claims_of_an_abstention(
    project: Project,
) -> None:
    mapping = NO_LIST.replace("response: response", "response: response || ''")
    rows = [
        {"id": "a", "claims": ["A."]},
        {"id": "b", "response": "B.", "abstained": True, "claims": ["B."]},
    ]
    assert errors_of(project, rows, mapping) == [
        "bench.jsonl, line 1, field 'response': at response || '': is empty (an empty "
        "response is kept only when the record's claim list is abstained: see claims.abstained)",
        "bench.jsonl, line 2, field 'claims.abstained': at abstained: the model abstained, "
        "yet 1 claim(s) were found",
    ]


NESTED = """\
id: id
response: response
claims:
  sentences: sentences
  sentence: sentence2.text
  items: auto_evidence
  text: "[3]"
"""


def test_every_nul_is_named_by_its_source_path_or_replaced(project: Project) -> None:
    row = {
        "id": "a",
        "response": "A.",
        "sentences": [
            {"sentence2": {"text": "S\u0000."}, "auto_evidence": [["x", "y", "z", "ok"]]},
            {
                "sentence2": {"text": "T."},
                "auto_evidence": [["x"] * 4, ["x", "y", "z", "b\u0000d"]],
            },
        ],
    }
    assert errors_of(project, [row], NESTED) == [
        f"bench.jsonl, line 1, field '{field}': at {at}: contains a NUL character (\\u0000); "
        "`nul: replace` in the mapping stores U+FFFD instead"
        for field, at in [
            ("claims.sentence", "sentences[0].sentence2.text"),
            ("claims.text", "sentences[1].auto_evidence[1].[3]"),
        ]
    ]
    summary = mapped_import(project, [row], NESTED + "nul: replace\n")
    assert [w.message for w in summary.warnings] == [
        "at sentences[0].sentence2.text: a NUL character (\\u0000) is stored as U+FFFD",
        "at sentences[1].auto_evidence[1].[3]: a NUL character (\\u0000) is stored as U+FFFD",
    ]
    assert Claim.objects.filter(text="b\ufffdd", sentence="T.").exists()


def test_a_dry_run_shows_the_first_records_and_imports_nothing(
    project: Project, tmp_path: Path
) -> None:
    path = tmp_path / "bench.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": f"r{i}", "response": f"R{i}.", "claims": [f"C{i}."]})
            for i in range(5)
        )
    )
    mapping = tmp_path / "bench.yaml"
    mapping.write_text(NO_LIST)
    out = io.StringIO()
    call_command(
        "import_data", "mapped", str(path), "--mapping", str(mapping), "--dry-run", stdout=out
    )
    lines = out.getvalue().splitlines()
    assert lines[0].endswith(
        "mapping: 5 record(s) valid, nothing imported (dry run); the first 3 as canonical JSONL:"
    )
    assert [json.loads(x) for x in lines[1:4]] == [
        {"id": f"r{i}", "response": f"R{i}.", "claim_lists": {"x": [f"C{i}."]}} for i in range(3)
    ]
    assert Document.objects.count() == 0
    path.write_text('{"id": "r", "response": ""}\n')
    with pytest.raises(CommandError) as e:
        call_command("import_data", "mapped", str(path), "--mapping", str(mapping), "--dry-run")
    assert e.value.returncode == 2 and "line 1, field 'response'" in str(e.value)


def test_the_api_and_the_upload_page_preview_without_importing(
    alpha: Project, users: dict[str, User]
) -> None:
    before = Document.objects.count()
    rows = "\n".join(json.dumps({"id": f"r{i}", "response": f"R{i}."}) for i in range(4))
    mapping = SimpleUploadedFile("bench.yaml", b"id: id\nresponse: response\n")
    api = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/documents/import/",
        {
            "file": SimpleUploadedFile("bench.jsonl", rows.encode()),
            "mapping": mapping,
            "dry_run": True,
        },
    )
    assert api.status_code == 200, api.content
    assert api.json() == {
        "format": "mapping",
        "records": 4,
        "warnings": [],
        "preview": [{"id": f"r{i}", "response": f"R{i}."} for i in range(3)],
    }
    page = Client()
    page.force_login(users["alice"])
    shown = page.post(
        f"/p/{alpha.pk}/import/",
        {
            "file": SimpleUploadedFile("c.jsonl", canonical_line(9).encode()),
            "format": "auto",
            "dry_run": "on",
        },
    )
    assert shown.status_code == 200
    assert (
        b"Nothing was imported (preview)" in shown.content
        and b"Person 9 was a painter" in shown.content
    )
    refused = page.post(
        f"/p/{alpha.pk}/import/",
        {"file": SimpleUploadedFile("c.jsonl", b'{"id": "x"}'), "format": "auto", "dry_run": "on"},
    )
    assert (
        refused.status_code == 400
        and b"c.jsonl, line 1, field &#x27;response&#x27;: is missing" in refused.content
    )
    assert Document.objects.count() == before


FACTSCORE = """\
id: topic
response: output
question: input
claims:
  system: fs-human
  labels: fs-labels
  abstained: "annotations == `null`"
  sentences: annotations
  sentence: text
  items: '"human-atomic-facts"'
  text: text
  label: label
values: {s: supported, ns: not-supported, ir: irrelevant}
"""


@pytest.mark.slow
def test_a_released_factscore_file_through_a_mapping_matches_its_own_importer(
    project: Project,
) -> None:
    """FActScore's InstructGPT file (abstentions included) read through a mapping file
    gives the human facts and labels its own importer gives."""
    path = peer_file("factscore_labeled/InstructGPT.jsonl")
    summary = import_file(project=project, path=path, file=path.name, mapping=FACTSCORE)
    assert summary.documents_created == 183
    native = Project.objects.create(name="native")
    import_file(project=native, path=path, file=path.name)

    def facts(p: Project, system: str) -> list[tuple[str, bool, int, str, str | None]]:
        return sorted(
            (
                c.claim_list.document.response,
                c.claim_list.abstained,
                c.position,
                c.text,
                c.verdicts.values_list("label", flat=True).first(),
            )
            for c in Claim.objects.filter(
                claim_list__document__project=p, claim_list__system__name=system
            ).select_related("claim_list__document")
        )

    mapped_facts = facts(project, "fs-human")
    assert len(mapped_facts) == 4726
    labels = {"supported": "s", "not-supported": "ns", "irrelevant": "ir"}
    assert [(*f[:4], labels[f[4] or ""]) for f in mapped_facts] == [
        (*f[:4], (f[4] or "").lower()) for f in facts(native, FACTSCORE_HUMAN)
    ]
    abstained = ClaimList.objects.filter(document__project=project, abstained=True)
    native_abstained = ClaimList.objects.filter(
        document__project=native, abstained=True, system__name=FACTSCORE_HUMAN
    )
    assert abstained.count() == native_abstained.count() > 0
    assert set(abstained.values_list("document__response", flat=True)) == {""}


def test_a_preview_is_for_the_projects_researchers_and_small_files(
    alpha: Project, users: dict[str, User], settings: Any
) -> None:
    """Attacks: an annotator of the project, a researcher of another project, no
    token, and a file above the size an import does in the web request."""
    body = {"content": canonical_line(9), "dry_run": True}
    url = f"/api/projects/{alpha.pk}/documents/import/"
    Project.objects.create(name="erin's").add_member(users["erin"], "researcher")
    for user, status in (("bob", 404), ("erin", 404), (None, 401)):
        client = token_client(users[user] if user else None)
        assert client.post(url, body, format="json").status_code == status, user
    settings.IMPORT_BACKGROUND_MB = 0.0001  # about 100 bytes
    big = SimpleUploadedFile("big.jsonl", (canonical_line(9) + "\n").encode() * 3)
    refused = token_client(users["alice"]).post(url, {"file": big, "dry_run": True})
    assert refused.status_code == 400
    assert (
        "a preview is for files up to 0.0001 MB (IMPORT_BACKGROUND_MB)" in refused.json()["message"]
    )
    assert not Document.objects.filter(external_id="doc-9").exists()


# issue 36: an expression reference (`&id`, a jmespath.visitor._Expression) is no JSON
# value; it reached json.dumps in the error message and the import died with a TypeError
REFERENCE = "response: response\nclaims: {items: '[&id]', text: '@'}\n"
REFERENCE_ERROR = (
    "refs.jsonl, line 2, field 'claims.items': at [&id]: the expression '[&id]' found an "
    "expression reference (&...) (at [0] in what it found), not a value"
)


def test_an_expression_reference_is_a_named_error_in_the_page_the_api_and_the_command(
    alpha: Project, users: dict[str, User], tmp_path: Path
) -> None:
    rows = "\n".join(json.dumps({"id": f"r{i}", "response": f"R{i}."}) for i in range(3))
    before = Document.objects.count()
    page = Client()
    page.force_login(users["alice"])
    shown = page.post(
        f"/p/{alpha.pk}/import/",
        {
            "file": SimpleUploadedFile("refs.jsonl", rows.encode()),
            "mapping": SimpleUploadedFile("refs.yaml", REFERENCE.encode()),
            "format": "mapping",
        },
    )
    assert shown.status_code == 400
    assert escape(REFERENCE_ERROR).encode() in shown.content
    api = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/documents/import/",
        {
            "file": SimpleUploadedFile("refs.jsonl", rows.encode()),
            "mapping": SimpleUploadedFile("refs.yaml", REFERENCE.encode()),
        },
    )
    assert api.status_code == 400, api.content
    body = api.json()
    assert body["code"] == "import_failed"
    assert [(e["file"], e["line"], e["field"]) for e in body["errors"]] == [
        ("refs.jsonl", n, "claims.items") for n in (1, 2, 3)
    ]
    assert REFERENCE_ERROR.split(": ", 1)[1] in body["errors"][1]["message"]
    (tmp_path / "refs.jsonl").write_text(rows)
    (tmp_path / "refs.yaml").write_text(REFERENCE)
    with pytest.raises(CommandError) as e:
        call_command(
            "import_data",
            alpha.name,
            str(tmp_path / "refs.jsonl"),
            "--mapping",
            str(tmp_path / "refs.yaml"),
        )
    assert e.value.returncode == 2 and REFERENCE_ERROR in str(e.value)
    assert Document.objects.count() == before


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("&id", "at &id: the expression '&id' found an expression reference (&...), not a"),
        ("{a: &id}", "found an expression reference (&...) (at a in what it found)"),
        ("not_null(&id)", "'not_null(&id)' found an expression reference (&...), not a"),
        # JMESPath writes a reference's Python repr (a new address each run)
        ("to_string(&id)", "failed (to_string() of an expression reference (&...))"),
        ("to_number(&id)", "failed (int() argument must be"),
        ("ceil(to_number('nan'))", "failed (cannot convert float NaN to integer)"),
        ("floor(`1e400`)", "failed (cannot convert float infinity to integer)"),
        ("to_number('nan')", "at to_number('nan'): found nan, which no database stores"),
        ("[to_number('-inf')]", "found [-Infinity], not text"),
    ],
)
def test_a_value_that_is_not_json_is_a_named_error(
    project: Project, expression: str, message: str
) -> None:
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=project,
            text=json.dumps({"id": "a", "response": "A."}),
            file="f.jsonl",
            mapping=json.dumps({"response": expression}),
        )
    assert [(x.file, x.line, x.field) for x in e.value.errors] == [("f.jsonl", 1, "response")]
    assert message in e.value.errors[0].message
    assert Document.objects.count() == 0


def test_a_label_that_is_not_json_is_a_named_error(project: Project) -> None:
    """The error message's own path: a label list holding an infinity or a reference."""
    for label_list, message in (
        ("[to_number('inf')]", "at [to_number('inf')][0]: found Infinity, not a label"),
        ("[&id]", "found an expression reference (&...) (at [0] in what it found)"),
    ):
        spec = {"response": "response", "segments": {"items": "[response]", "text": "@"}}
        spec["segments"]["label_list"] = label_list  # type: ignore[index]
        with pytest.raises(ImportFailed) as e:
            import_file(
                project=project,
                text=json.dumps({"response": "A."}),
                file="f.jsonl",
                mapping=json.dumps(spec),
            )
        assert [(x.line, x.field) for x in e.value.errors] == [(1, "segments.label_list")]
        assert message in e.value.errors[0].message
