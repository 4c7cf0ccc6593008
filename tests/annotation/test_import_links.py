"""Issue 38 (low): `javascript:` links were stored from `knowledge[].url` and from other
formats' evidence links (the page's Content-Security-Policy blocked the click). Every
format's records pass one check: a link is empty or http(s), else the line is refused
naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.ingest import import_file
from annotation.models import Document, Evidence, Project
from pipeline.dataformats.common import ImportFailed


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
