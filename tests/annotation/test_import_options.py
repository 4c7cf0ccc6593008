"""The formats registry is the one list of formats: the upload page's, the API's and the
commands' choices and the manual's table are the registry's. Import options are one
`ImportOptions`, checked once: a bad value is a named error on the page (400, on the
field), in the API (400, its field) and from `import_data` (exit status 2); a background
job stores the options whole."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.test import Client

from annotation import formats
from annotation.api.documents import DocumentImportApi
from annotation.import_jobs import start_import
from annotation.import_options import ImportForm, ImportOptions, ImportOptionsError
from annotation.models import Document, ImportJob, Project
from pipeline import dataformats

from .api_helpers import token_client

DOCS = Path(__file__).parents[2] / "docs" / "researchers" / "importing.md"
FRAMEWORK_NUL = "Null characters are not allowed."
ROW = json.dumps({"id": "d1", "response": "A response."}) + "\n"


def _choices(command: str) -> list[str]:
    """The --format choices of a management command's parser."""
    parser = load_command_class("annotation", command).create_parser("manage.py", command)
    (action,) = [a for a in parser._actions if "--format" in a.option_strings]
    assert isinstance(action, argparse.Action) and action.choices is not None
    return list(action.choices)


def test_the_page_the_api_and_the_commands_offer_the_registrys_formats(
    users: dict[str, User],
) -> None:
    readable = [f.name for f in formats.FORMATS.values() if f.reads]
    assert formats.IMPORT_CHOICES == ("auto", *readable)
    assert set(readable) == set(dataformats.FORMATS)  # every reader has its entry
    page: Any = ImportForm().fields["format"]
    assert [value for value, _ in page.choices] == list(formats.IMPORT_CHOICES)
    api: Any = DocumentImportApi.InputSerializer().fields["format"]
    assert list(api.choices) == list(formats.IMPORT_CHOICES)
    assert _choices("import_data") == list(formats.IMPORT_CHOICES)
    written = [f.export_name for f in formats.FORMATS.values() if f.writer]
    assert list(formats.EXPORTS) == written
    assert _choices("export_data") == written
    schema = token_client(users["alice"]).get("/api/schema/?format=json").json()
    export = schema["paths"]["/api/projects/{project_id}/exports/{name}"]["get"]
    (name,) = [p for p in export["parameters"] if p["name"] == "name"]
    assert name["schema"]["enum"] == sorted(written)
    params = {p["name"] for p in export["parameters"]} - {"name", "project_id"}
    assert params == set(formats.PARAMS)


def test_the_manuals_table_of_formats_is_the_registrys() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("<!-- formats: annotation.formats.format_table() -->\n")
    table = text[text.index("\n", start) + 1 : text.index("<!-- /formats -->")]
    assert table == formats.format_table(), "paste formats.format_table() into " + str(DOCS)


def test_the_api_manual_names_every_export() -> None:
    text = (DOCS.parent.parent / "api.md").read_text(encoding="utf-8")
    assert [name for name in formats.EXPORTS if name not in text] == []


def test_an_unknown_export_names_the_registrys() -> None:
    with pytest.raises(ValueError, match="unknown export 'x.csv'; one of canonical.jsonl"):
        formats.export(Project(), "x.csv", params={})


BAD = [
    ({"format": "veriscore", "mapping": "m"}, "mapping", "goes with the format 'mapping'"),
    ({"format": "mapping"}, "mapping", "the format 'mapping' needs a mapping file"),
    ({"system": "a\x00b"}, "system", "NUL character"),
    ({"verifier": "v" * 201}, "verifier", "is 201 characters; at most 200"),
    ({"domain": "d" * 101}, "domain", "is 101 characters; at most 100"),
    ({"source_model": "\ud800"}, "source_model", "lone surrogate"),
]


@pytest.mark.parametrize(("given", "field", "message"), BAD)
def test_a_bad_option_is_a_named_error_on_the_page_the_api_and_the_command(
    alpha: Project,
    users: dict[str, User],
    tmp_path: Path,
    given: dict[str, str],
    field: str,
    message: str,
) -> None:
    before = Document.objects.count()
    nul = any("\x00" in v for v in given.values())
    # DRF's CharField refuses NUL characters and lone surrogates itself, on the field
    framework = nul or any("\ud800" in v for v in given.values())
    data: dict[str, Any] = {k: v for k, v in given.items() if k != "mapping"}
    if "mapping" in given:
        data["mapping"] = SimpleUploadedFile("map.yaml", b"id: id\n")
    with pytest.raises(ImportOptionsError) as raised:
        ImportOptions.from_data(data)
    assert raised.value.field == field and message in raised.value.message
    page = Client()
    page.force_login(users["alice"])
    if not any("\ud800" in v for v in given.values()):  # no form post carries a surrogate
        if "mapping" in given:
            data["mapping"] = SimpleUploadedFile("map.yaml", b"id: id\n")
        shown = page.post(
            f"/p/{alpha.pk}/import/",
            {"file": SimpleUploadedFile("a.jsonl", ROW.encode()), "format": "auto", **data},
        )
        assert shown.status_code == 400
        form = shown.context["form"]
        # Django's own refusal of a NUL character comes first on the page (and in the API)
        assert (FRAMEWORK_NUL if nul else message) in " ".join(form.errors[field])
    if "mapping" in given:  # a mapping file goes in a multipart upload
        data["mapping"] = SimpleUploadedFile("map.yaml", b"id: id\n")
        sent: dict[str, Any] = {"file": SimpleUploadedFile("a.jsonl", ROW.encode()), **data}
    else:
        sent = {"content": ROW, **data}
    url = f"/api/projects/{alpha.pk}/documents/import/"
    client = token_client(users["alice"])
    if "mapping" in given:
        api = client.post(url, sent, format="multipart")
    else:  # JSON escapes a lone surrogate (\ud800), which the API then reads
        api = client.post(url, json.dumps(sent), content_type="application/json")
    assert api.status_code == 400, api.content
    body = api.json()
    assert body["field"] == field
    if not framework:
        assert body["code"] == "invalid_option" and message in body["message"]
    (tmp_path / "a.jsonl").write_text(ROW)
    args = [alpha.name, str(tmp_path / "a.jsonl")]
    for key, value in given.items():
        if key == "mapping":
            (tmp_path / "map.yaml").write_text("id: id\n")
            value = str(tmp_path / "map.yaml")
        args += [f"--{key.replace('_', '-')}", value]
    with pytest.raises(CommandError) as e:
        call_command("import_data", *args)
    assert e.value.returncode == 2
    assert f"--{field.replace('_', '-')}: " in str(e.value) and message in str(e.value)
    assert Document.objects.count() == before


def test_an_unknown_format_is_refused_by_each_surface(
    alpha: Project, users: dict[str, User]
) -> None:
    with pytest.raises(ImportOptionsError, match="unknown format 'jsonl'; one of auto, canonical"):
        ImportOptions(fmt="jsonl")
    page = Client()
    page.force_login(users["alice"])
    shown = page.post(
        f"/p/{alpha.pk}/import/",
        {"file": SimpleUploadedFile("a.jsonl", ROW.encode()), "format": "jsonl"},
    )
    assert shown.status_code == 400 and "format" in shown.context["form"].errors
    api = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/documents/import/",
        {"content": ROW, "format": "jsonl"},
        format="json",
    )
    assert api.status_code == 400 and api.json()["field"] == "format"


def test_a_mapping_file_that_is_not_utf8_is_an_error_on_the_field(
    alpha: Project, users: dict[str, User]
) -> None:
    page = Client()
    page.force_login(users["alice"])
    shown = page.post(
        f"/p/{alpha.pk}/import/",
        {
            "file": SimpleUploadedFile("a.jsonl", ROW.encode()),
            "format": "auto",
            "mapping": SimpleUploadedFile("map.yaml", b"id: \xff\n"),
        },
    )
    assert shown.status_code == 400
    assert "UTF-8" in " ".join(shown.context["form"].errors["mapping"])


def test_options_changed_by_name_and_kept_by_a_job_whole(
    alpha: Project, settings: Any, tmp_path: Path
) -> None:
    settings.VAR_DIR = tmp_path
    options = ImportOptions(fmt="felm", domain="math", update=True)
    job = start_import(
        project=alpha,
        user=None,
        upload=SimpleUploadedFile("math.jsonl", b"{}\n"),
        options=options,
    )
    stored = ImportJob.objects.get(pk=job.pk).options
    assert stored == {
        "fmt": "felm",
        "system": "",
        "source_model": "",
        "verifier": "",
        "domain": "math",
        "update": True,
        "mapping": "",
        "mapping_file": "mapping",
    }
    assert ImportOptions.from_record(stored) == options
    # a record of an older version: the keys it had; one no longer known is left out
    assert ImportOptions.from_record({"fmt": "felm", "gone": 1}) == ImportOptions(fmt="felm")
    with pytest.raises(ImportOptionsError):
        ImportOptions.from_record({"fmt": "retired"})
    assert ImportOptions(fmt="release").archive and not options.archive
    assert ImportOptions(mapping="id: id").reader == "mapping"
