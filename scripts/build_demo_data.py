"""Rebuild fixtures/demo/veriscore_verification_examples.jsonl from ../shared.

Sources: VeriScore's 9 human-labelled verification demos (peer-data, Apache-2.0) and
the examples of Tables 8 and 9 of the VeriScore paper (seeds). Run from the repository
root: `.venv/bin/python scripts/build_demo_data.py`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
OUT = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "veriscore_verification_examples.jsonl"
RESULT = re.compile(r"Search result \d+\s*\nTitle: (?P<title>.*)\s*\n(?:Content: (?P<content>.*)\s*\n)?Link: <?(?P<link>[^>\s]*)>?", re.M)
RESULT_CONTENT_LAST = re.compile(r"Search result \d+\s*\nTitle: (?P<title>.*)\s*\nLink: <?(?P<link>[^>\s]*)>?\s*\nContent: (?P<content>.*)", re.M)


def parse_results(text: str) -> list[dict[str, str]]:
    text = re.sub(r"\n\s*\n", "\n", text)
    found = [m.groupdict() for m in RESULT.finditer(text)] or [m.groupdict() for m in RESULT_CONTENT_LAST.finditer(text)]
    return [{"title": r["title"].strip(), "snippet": (r["content"] or "").strip(),
             # the paper prints some links as Markdown: [text](url)
             "link": re.sub(r"^\[.*\]\((.*)\)$", r"\1", r["link"].strip())} for r in found]


def demo_records() -> list[dict[str, object]]:
    labels = {"Supported.": "supported", "Contradicted.": "contradicted", "Inconclusive.": "inconclusive"}
    records = []
    for i, line in enumerate((SHARED / "peer-data/veriscore/few_shot_examples.jsonl").read_text().splitlines()):
        demo = json.loads(line)
        records.append({
            "id": f"veriscore-demo-{i + 1}", "response": demo["claim"], "domain": "VeriScore demos",
            "metadata": {"source": "VeriScore data/demos/few_shot_examples.jsonl (Apache-2.0)"},
            "claim_lists": {"veriscore-paper-examples": [{
                "text": demo["claim"], "evidence": parse_results(demo["search_result"]),
                "verdicts": {"veriscore-human-labels": labels[demo["human_label"]]}}]},
        })
    return records


def table_records() -> list[dict[str, object]]:
    paper = (SHARED / "seeds/002_c83afab61172a66a.txt").read_text()
    table8 = paper[paper.index("The intention of Stanford University"):paper.index("Table 8: Examples")]
    claim8 = "The intention of Stanford University's Persuasive Technology Lab was to create positive behavior change."
    table9 = paper[paper.index("Annotator mistake"):paper.index("Table 9: Example")]
    # Table 9: claim -> the annotators' majority (None: no majority), evidence as printed
    cases = [
        ("Luis Guillermo Rivera has written literary criticism.", "inconclusive"),
        ("Traits that can be chosen include eye color, hair color, intelligence, and athletic ability.", "supported"),
        ("Jessica Barboza was born in São Paulo, Brazil.", None),
        ("The disposal of radioactive waste is aimed at ensuring public health.", "supported"),
    ]
    records = [{
        "id": "veriscore-table-8", "response": claim8, "domain": "VeriScore paper",
        "metadata": {"source": "VeriScore paper, Table 8 (all three annotators: inconclusive)"},
        "claim_lists": {"veriscore-paper-examples": [{
            "text": claim8, "evidence": parse_results(table8),
            "verdicts": {"veriscore-human-labels": "inconclusive"}}]},
    }]
    for n, (claim, label) in enumerate(cases, start=1):
        start = table9.index(claim)
        following = [table9.index(c) for c, _ in cases if table9.index(c) > start]
        chunk = table9[start:min(following) if following else len(table9)]
        records.append({
            "id": f"veriscore-table-9-{n}", "response": claim, "domain": "VeriScore paper",
            "metadata": {"source": "VeriScore paper, Table 9 (annotators disagreed); evidence as printed"},
            "claim_lists": {"veriscore-paper-examples": [{
                "text": claim, "evidence": parse_results(chunk),
                "verdicts": {"veriscore-human-labels": label} if label else {}}]},
        })
    return records


if __name__ == "__main__":
    records = demo_records() + table_records()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    for r in records:
        claim = r["claim_lists"]["veriscore-paper-examples"][0]  # type: ignore[index]
        print(r["id"], len(claim["evidence"]), "results")
