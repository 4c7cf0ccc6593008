"""Issue 38 (low): `javascript:` links were stored from `knowledge[].url` and from other
formats' evidence links (the page's Content-Security-Policy blocked the click). Every
format's records pass one check: a link is empty or http(s), else the line is refused
naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.ingest import REFUSED_LINKS, import_file, ingest_results
from annotation.models import Document, Evidence, Project
from pipeline.dataformats.common import ImportFailed
from pipeline.types import Claim as PClaim
from pipeline.types import ClaimResult, ResponseResult
from pipeline.types import Evidence as PEvidence
from pipeline.types import Verdict as PVerdict


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "JAVASCRIPT:x"])
def test_a_knowledge_url_that_is_not_http_is_refused(alpha: Project, url: str) -> None:
    line = {
        "id": "k-1",
        "response": "Ada Lovelace wrote the first program.",
        "knowledge": [{"text": "Ada Lovelace ...", "title": "Ada", "url": url}],
    }
    with pytest.raises(ImportFailed, match=r"knowledge\[0\]\.url.*must be an http\(s\) URL"):
        import_file(project=alpha, text=json.dumps(line), file="k.jsonl")
    assert not Document.objects.filter(external_id="k-1").exists()


def test_a_mapped_files_evidence_link_that_is_not_http_is_refused(alpha: Project) -> None:
    data = Path(__file__).parent / "data" / "mapping"
    text = (data / "nested_claims.jsonl").read_text()
    bad = text.replace("https://en.wikipedia.org/wiki/Mona_Lisa", "javascript:alert(1)")
    mapping = (data / "nested_claims.yaml").read_text()
    with pytest.raises(ImportFailed, match=r"link.*must be an http\(s\) URL"):
        import_file(project=alpha, text=bad, file="n.jsonl", mapping=mapping)
    assert not Evidence.objects.exists()
    import_file(project=alpha, text=text, file="n.jsonl", mapping=mapping)
    assert Evidence.objects.filter(link="https://en.wikipedia.org/wiki/Mona_Lisa").exists()


def pipeline_result(links: list[str]) -> ResponseResult:
    claim = ClaimResult(
        PClaim("A is a.", 0, "A is a."),
        [PEvidence(i + 1, "t", "s", link) for i, link in enumerate(links)],
        PVerdict("Supported.", "raw answer", True),
    )
    return ResponseResult(
        id="r1",
        response="A is a.",
        question=None,
        model="m",
        domain="d",
        abstained=False,
        extractor="veriscore",
        extraction_model="x",
        verification_model="y",
        prompt_version="e1+v1",
        label_mode="binary",
        retriever="serper",
        claims=[claim],
    )


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,x", "JavaScript:x"])
def test_a_search_results_link_that_is_not_http_is_stored_empty(alpha: Project, link: str) -> None:
    """A run's search results (Serper's organic[].link) go through the one write path: a
    link that is not http(s) is stored empty, the original kept in the document's
    metadata, with a warning naming it (a search result is not the researcher's to fix,
    so the run is not refused for it)."""
    result = pipeline_result(["https://example.org/a", link])
    for _ in range(2):  # a chunk ingested twice keeps one note per link
        summary = ingest_results(
            project=alpha, results=[result], extractor_name="ex", verifier_name="ve"
        )
    assert list(Evidence.objects.order_by("rank").values_list("link", flat=True)) == [
        "https://example.org/a",
        "",
    ]
    doc = Document.objects.get(external_id="r1")
    assert doc.metadata[REFUSED_LINKS] == [{"system": "ex", "claim": 0, "rank": 2, "link": link}]
    [warning] = summary.warnings
    assert "result r1, field 'claims[0].evidence[1].link': must be an http(s) URL" in str(warning)
    assert "stored empty" in str(warning)


def test_a_run_on_a_known_document_keeps_the_refused_link_in_its_metadata(
    alpha: Project,
) -> None:
    Document.objects.create(project=alpha, external_id="r1", response="A is a.", metadata={"k": 1})
    ingest_results(
        project=alpha,
        results=[pipeline_result(["data:text/html,<script>x</script>"])],
        extractor_name="ex",
        verifier_name="ve",
    )
    doc = Document.objects.get(external_id="r1")
    assert doc.metadata["k"] == 1 and doc.metadata[REFUSED_LINKS][0]["link"].startswith("data:")
    assert Evidence.objects.get().link == ""
