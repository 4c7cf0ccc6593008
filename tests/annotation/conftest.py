"""Hand-built report data: four verification claims judged by bob and carol, two
verifiers, and the four comparison items of `alpha_items` with known presented orders.

The expected numbers are worked out by hand in tests/annotation/test_reports.py.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import (
    Assignment,
    Claim,
    ClaimList,
    Document,
    Evidence,
    Item,
    Project,
    System,
    Verdict,
)

# Claim labels per claim (bob, carol): agreement on 3 of 4.
LABELS = [
    ("supported", "supported"),
    ("supported", "contradicted"),  # a tie: gold inconclusive-not-enough (VeriScore's rule)
    ("contradicted", "contradicted"),
    ("inconclusive-not-enough", "inconclusive-not-enough"),
]
# Stance of search results 1 and 2 per claim (bob, carol).
STANCES = [
    {1: ("supports", "supports"), 2: ("inconclusive", "contradicts")},
    {1: ("supports", "supports"), 2: ("inconclusive", "inconclusive")},
    {1: ("supports", "supports"), 2: ("inconclusive", "inconclusive")},
    {1: ("supports", "supports"), 2: ("inconclusive", "inconclusive")},
]
V1 = ["supported", "supported", "unsupported", "supported"]  # a binary verifier
V2 = ["supported", "contradicted", "contradicted", "inconclusive"]  # a ternary one
# Comparison items: (swapped, choice, hard) for bob and for carol.
CHOICES = [
    ((False, "1", "no"), (True, "1", "yes")),
    ((True, "2", "no"), (False, "1", "no")),
    ((False, "2", "yes"), (True, "2", "no")),
    ((True, "2", "yes"), (True, "2", "no")),
]


def submit(
    item: Item, user: User, values: dict[tuple[str, str], str], *, swapped: bool = False
) -> Assignment:
    assignment, _ = Assignment.objects.get_or_create(item=item, annotator=user)
    assignment.swapped = swapped
    assignment.active_seconds = 30.0
    assignment.save()
    assignment.submit(values, guideline_version=1)
    return assignment


@pytest.fixture
def verification(alpha: Project, users: dict[str, User]) -> list[Item]:
    """Claims 1-2 in a Biography document, 3-4 in an ELI5 one, all by model-x."""
    extractor = System.objects.create(project=alpha, name="extractor-v")
    v1 = System.objects.create(project=alpha, name="verifier-one", kind=System.VERIFIER)
    v2 = System.objects.create(project=alpha, name="verifier-two", kind=System.VERIFIER)
    items = []
    for d, domain in enumerate(["Biography", "ELI5"]):
        doc = Document.objects.create(
            project=alpha,
            external_id=f"vdoc-{d}",
            domain=domain,
            response="Some text.",
            source_model="model-x",
        )
        claim_list = ClaimList.objects.create(document=doc, system=extractor)
        for p in range(2):
            i = 2 * d + p
            claim = Claim.objects.create(
                claim_list=claim_list, position=p, text=f"Claim number {i} & 50% of {{it}}"
            )
            for rank in (1, 2):
                Evidence.objects.create(claim=claim, rank=rank, title=f"r{rank}")
            Verdict.objects.create(claim=claim, system=v1, label=V1[i])
            Verdict.objects.create(claim=claim, system=v2, label=V2[i])
            items.append(
                Item.objects.create(
                    project=alpha, kind=Item.VERIFICATION, document=doc, claim=claim
                )
            )
    for i, item in enumerate(items):
        for who, person in enumerate(("bob", "carol")):
            values = {("item", "label"): LABELS[i][who]}
            for rank, pair in STANCES[i].items():
                values[(f"evidence:{rank}", "stance")] = pair[who]
            submit(item, users[person], values)
    return items


@pytest.fixture
def judged_comparisons(alpha_items: list[Item], users: dict[str, User]) -> list[Item]:
    items = sorted(alpha_items, key=lambda i: i.pk)
    for item, answers in zip(items, CHOICES, strict=True):
        for person, (swapped, choice, hard) in zip(("bob", "carol"), answers, strict=True):
            submit(
                item,
                users[person],
                {
                    ("item", "choice"): choice,
                    ("item", "hard"): hard,
                    ("item", "justification"): "because",
                },
                swapped=swapped,
            )
    return items


# --- atomic facts (FActScore-style) ---------------------------------------------------

FACT_LISTER = "zz-secret-fact-lister"
FACT_VERIFIER = "zz-secret-fact-verifier"
FACTS = ["Person {i} was born in 1900.", "Person {i} was a painter.", "Person {i} liked tea."]
FACT_VERDICTS = ["supported", "unsupported", "supported"]


def atomic_line(i: int) -> str:
    import json

    return json.dumps(
        {
            "id": f"bio-{i}",
            "question": f"Tell me a bio of Person {i}.",
            "response": f"Person {i} was a painter born in 1900 who liked tea.",
            "domain": "Biography",
            "knowledge": [
                {
                    "title": f"Person {i}",
                    "text": f"Person {i} (1900-1970) was a painter.",
                    "url": f"https://en.wikipedia.org/wiki/Person_{i}",
                }
            ],
            "claim_lists": {
                FACT_LISTER: [
                    {"text": fact.format(i=i), "verdicts": {FACT_VERIFIER: verdict}}
                    for fact, verdict in zip(FACTS, FACT_VERDICTS, strict=True)
                ]
            },
        }
    )


@pytest.fixture
def alpha_atomic(alpha: Project, beta: Project) -> list[Item]:
    """Two atomic-fact items (three facts each, one knowledge passage) for bob and carol."""
    from annotation.ingest import import_file
    from annotation.kinds.atomic import atomic_items
    from annotation.models import assign

    import_file(project=alpha, text="\n".join(atomic_line(i) for i in range(2)), file="facts.jsonl")
    items = atomic_items(project=alpha, system=System.objects.get(project=alpha, name=FACT_LISTER))
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    for user in alpha.annotators():
        alpha.memberships.get(user=user).acknowledge()
    return items


@pytest.fixture
def demo(db: None) -> Project:
    """The demo project (`load_demo`: real data, three annotators), every member having
    acknowledged its instructions."""
    import io

    from django.core.management import call_command

    from annotation.management.commands.load_demo import DEMO_PROJECT

    call_command("load_demo", stdout=io.StringIO())
    project = Project.objects.get(name=DEMO_PROJECT)
    for m in project.memberships.all():
        m.acknowledge()
    return project
