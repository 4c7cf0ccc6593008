"""The OpenAPI schema: generated without warnings, and the live API conforms to it."""

from __future__ import annotations

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token

from annotation.models import Item, Project


@pytest.mark.slow
def test_the_schema_generates_without_warnings() -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


# Names a component must not have: what a nested InputSerializer/OutputSerializer or a
# choice field gets when nobody names it.
GENERIC = {"Input", "Output", "Serializer", "Request", "Response", "Data", "Body", "Result"}
GENERIC |= {"Detail", "List", "Action", "Format", "Status", "Role", "Extractor", "Retriever"}
GENERIC |= {"LabelMode", "Stratify", "Provenance", "Joined", "Feedback"}
RESOURCES = ("Answer", "Assignment", "Document", "Error", "Gold", "Instructions", "Invite")
RESOURCES += ("Item", "Member", "Paginated", "PipelineRun", "Policy", "Project", "Quality")
RESOURCES += ("System", "Prolific", "Webhook")


def test_every_schema_component_is_named_after_its_resource() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    names = set(schema["components"]["schemas"])
    assert {"ProjectListInputRequest", "AssignmentDetail", "PipelineRunExtractorEnum"} <= names
    generic = [n for n in names if n.removesuffix("Request").removesuffix("Enum") in GENERIC]
    assert generic == []
    assert sorted(n for n in names if not n.startswith(RESOURCES)) == []


GUARD = 60  # seconds: a request's deadline against the live server, a guard against a hang


@pytest.fixture
def api_schema(
    live_server, alpha: Project, alpha_items: list[Item], users: dict[str, User], settings
):  # type: ignore[no-untyped-def]
    settings.API_WRITE_RATE = None  # hypothesis sends many writes
    token = Token.objects.create(user=users["alice"])
    # 60 s: a guard, not a timing (the default 10 s was exceeded on a loaded machine)
    schema = schemathesis.openapi.from_url(
        f"{live_server.url}/api/schema/?format=json", timeout=GUARD
    )
    schema.config.headers = {"Authorization": f"Token {token.key}"}  # type: ignore[attr-defined]
    return schema


CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_api_conforms_to_its_schema(api_schema) -> None:  # type: ignore[no-untyped-def]
    """Every operation, a few deterministic examples each, against the live server."""
    headers = api_schema.config.headers
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=6,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def check(case: schemathesis.Case) -> None:
            response = case.call(headers=headers, timeout=GUARD)
            assert response.status_code < 500, (operation.label, response.text[:500])  # noqa: B023  (called in this iteration)
            case.validate_response(response, checks=CHECKS)

        check()
