"""python manage.py agreement_report PROJECT --format ..."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("agreement_report", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_json_holds_every_section(verification: list[Item]) -> None:
    data = json.loads(run("alpha", "--format", "json", "--bootstrap", "0"))
    slugs = [s["slug"] for s in data["sections"]]
    assert "agreement" in slugs and "verifiers" in slugs and "pipeline" in slugs
    assert "bob" not in json.dumps(data)


def test_one_table_as_csv_and_latex(verification: list[Item]) -> None:
    text = run("alpha", "--format", "csv", "--table", "claim-labels", "--bootstrap", "0")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0] == {"label": "Supported", "count": "1", "%": "25.0"}
    latex = run("alpha", "--format", "latex", "--table", "claim-labels")
    assert r"\begin{tabular}{lrr}" in latex and "Supported & 1 & 25.0" in latex


def test_all_tables_as_csv_are_separated(verification: list[Item]) -> None:
    text = run("alpha", "--format", "csv", "--bootstrap", "0")
    assert "# table: agreement-overview" in text and "# table: effort" in text


def test_html_and_wide_to_files(verification: list[Item], tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    run(
        str(verification[0].project.pk),
        "--format",
        "html",
        "--output",
        str(html),
        "--bootstrap",
        "10",
        "--seed",
        "2",
    )
    assert "<svg" in html.read_text() and "Annotator effort" in html.read_text()
    wide = tmp_path / "wide.csv"
    run("alpha", "--format", "wide", "--names", "--output", str(wide))
    header = next(csv.reader(io.StringIO(wide.read_text())))
    assert header[6:] == ["bob", "carol"]


def test_filters_and_errors(verification: list[Item]) -> None:
    text = run(
        "alpha",
        "--format",
        "json",
        "--table",
        "agreement-verification-label-coefficients",
        "--domain",
        "Biography",
        "--bootstrap",
        "0",
    )
    rows = json.loads(text)["rows"]
    assert next(r for r in rows if r["coefficient"] == "Percent agreement")["value"] == 0.5
    only = json.loads(
        run(
            "alpha",
            "--format",
            "json",
            "--annotator",
            "A1",
            "--table",
            "effort",
            "--bootstrap",
            "0",
        )
    )
    assert {r["annotator"] for r in only["rows"]} == {"A1"}
    with pytest.raises(CommandError, match="No table"):
        run("alpha", "--format", "csv", "--table", "nope")
    with pytest.raises(CommandError, match="Not members"):
        run("alpha", "--annotator", "zed")
    with pytest.raises(CommandError, match="No project"):
        run("nowhere")
