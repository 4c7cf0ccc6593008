"""Personas (healthchecks style): alice researches, bob and carol annotate project
"alpha"; dave annotates and erin researches the unrelated project "beta"."""

from __future__ import annotations

import json
import os
from pathlib import Path

import hypothesis
import pytest
from django.contrib.auth.models import User

from annotation.ingest import import_file
from annotation.kinds.comparison import comparison_items
from annotation.members import researchers_group
from annotation.models import Item, Membership, Project, System, assign
from tests.browser import page  # noqa: F401  (the browser fixture, for every test)
from tests.requires import unavailable

# The property tests' profiles. Hypothesis's own "ci" (loaded when CI=true; Hypothesis
# also loads it whenever a CI variable is set): derandomized, so a CI run is reproducible
# and two runs of one commit agree. "fuzz": randomized from the seed given with
# --hypothesis-seed, no example database; .ci/run's fuzz step and bench/import_fuzz.py use
# it (--hypothesis-profile=fuzz). Otherwise Hypothesis's default: randomized.
hypothesis.settings.register_profile(
    "fuzz", derandomize=False, database=None, deadline=None, print_blob=True
)
if os.environ.get("CI") == "true":
    hypothesis.settings.load_profile("ci")

# The field's released files, beside the repository as in CI (a fresh clone with shared/).
PEER_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "peer-data"


def peer_file(name: str) -> Path:
    """A file of ../shared/peer-data; skips when it is absent, except in CI where that fails."""
    path = PEER_DATA / name
    if not path.exists():
        unavailable(f"{path} is not here (../shared is absent)")
    return path


# System names chosen to be unmistakable in page text: they must never reach annotators.
SYSTEM_A = "zz-secret-extractor-alpha"
SYSTEM_B = "zz-secret-extractor-beta"


def canonical_line(i: int, **extra: object) -> str:
    record = {
        "id": f"doc-{i}",
        "question": f"Who was person {i}?",
        "response": f"Person {i} was born in 1900. Person {i} was a painter.",
        "domain": "Biography",
        "source_model": "model-x",
        "claim_lists": {
            SYSTEM_A: [f"Person {i} was born in 1900.", f"Person {i} was a painter."],
            SYSTEM_B: [f"Person {i} was a painter born in 1900."],
        },
    }
    record.update(extra)
    return json.dumps(record)


@pytest.fixture(autouse=True)
def fast_passwords(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db: None) -> dict[str, User]:
    people = {
        name: User.objects.create_user(name, password="pw-" + name)
        for name in ("alice", "bob", "carol", "dave", "erin")
    }
    # the researchers may create projects (the group made by migration 0005)
    researchers_group().user_set.add(people["alice"], people["erin"])
    return people


@pytest.fixture
def alpha(users: dict[str, User]) -> Project:
    project = Project.objects.create(name="alpha", instructions="Read carefully.")
    project.add_member(users["alice"], Membership.RESEARCHER)
    project.add_member(users["bob"], Membership.ANNOTATOR)
    project.add_member(users["carol"], Membership.ANNOTATOR)
    text = "\n".join(canonical_line(i) for i in range(4))
    import_file(project=project, text=text, file="alpha.jsonl")
    return project


@pytest.fixture
def beta(users: dict[str, User]) -> Project:
    project = Project.objects.create(name="beta", instructions="Beta rules.")
    project.add_member(users["erin"], Membership.RESEARCHER)
    project.add_member(users["dave"], Membership.ANNOTATOR)
    return project


@pytest.fixture
def alpha_items(alpha: Project, beta: Project) -> list[Item]:
    """Four comparison items, every one assigned to both bob and carol."""
    a = System.objects.get(project=alpha, name=SYSTEM_A)
    b = System.objects.get(project=alpha, name=SYSTEM_B)
    items = comparison_items(project=alpha, system_a=a, system_b=b)
    assign(items, project=alpha, k=2, fraction=1.0, seed=1)
    for user in alpha.annotators():
        alpha.memberships.get(user=user).acknowledge()
    return items


def login(client, user: User):  # type: ignore[no-untyped-def]
    client.force_login(user)
    return client


VERIFIER = "zz-secret-verifier"
EVIDENCE = [
    {
        "title": "Person 0 - Wikipedia",
        "snippet": "Person 0 (born 1900) was a painter.",
        "link": "https://en.wikipedia.org/wiki/Person_0",
    },
    {
        "title": "Painters born in 1900",
        "snippet": "A list that includes Person 0.",
        "link": "https://example.org/painters",
    },
    {
        "title": "Unrelated",
        "snippet": "Nothing about the claim.",
        "link": "https://example.org/other",
    },
]


def verification_line(i: int) -> str:
    claim = {
        "text": f"Person {i} was born in 1900.",
        "evidence": EVIDENCE,
        "verdicts": {VERIFIER: "unsupported"},
    }
    return json.dumps(
        {
            "id": f"v-{i}",
            "response": f"Person {i} was born in 1900.",
            "domain": "Biography",
            "claim_lists": {SYSTEM_A: [claim]},
            "segments": [f"Person {i} was born in 1900.", f"Person {i} painted {i} pictures."],
        }
    )


@pytest.fixture
def alpha_verification(alpha: Project, beta: Project) -> list[Item]:
    """Two verification items (three search results each) for bob and carol."""
    from annotation.kinds.verification import verification_items

    import_file(
        project=alpha, text="\n".join(verification_line(i) for i in range(2)), file="v.jsonl"
    )
    system = System.objects.get(project=alpha, name=SYSTEM_A)
    items = verification_items(project=alpha, system=system, n=10, seed=0)
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    for user in alpha.annotators():
        alpha.memberships.get(user=user).acknowledge()
    return items


@pytest.fixture
def alpha_segments(alpha: Project, beta: Project) -> list[Item]:
    """Segment items for the two documents with imported segments, for bob and carol."""
    from annotation.kinds.segment import segment_items
    from annotation.models import Document

    import_file(
        project=alpha, text="\n".join(verification_line(i) for i in range(2)), file="v.jsonl"
    )
    items = segment_items(
        project=alpha, documents=Document.objects.filter(external_id__startswith="v-")
    )
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    for user in alpha.annotators():
        alpha.memberships.get(user=user).acknowledge()
    return items


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The test database is dropped by pytest-django; SQLite's WAL side files stay behind."""
    from django.conf import settings

    name = settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if name:
        for suffix in ("-wal", "-shm"):
            Path(str(name) + suffix).unlink(missing_ok=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `database("postgresql")` or `database("sqlite")` test one database's
    own behaviour: on the other database they are deselected (each CI pass runs its own),
    never skipped."""
    from django.db import connection

    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("database")
        (drop if marker and marker.args[0] != connection.vendor else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
