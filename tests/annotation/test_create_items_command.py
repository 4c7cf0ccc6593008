from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.ingest import import_file
from annotation.models import Assignment, Item, Project
from tests.conftest import SYSTEM_A, SYSTEM_B, verification_line


def test_it_creates_each_kind_of_item(alpha: Project) -> None:
    import_file(
        project=alpha, text="\n".join(verification_line(i) for i in range(3)), file="v.jsonl"
    )
    call_command(
        "create_items", "alpha", "comparison", SYSTEM_A, SYSTEM_B, "--k", "all", "--fraction", "1"
    )
    assert Item.objects.filter(kind=Item.COMPARISON).count() == 4
    assert Assignment.objects.filter(item__kind=Item.COMPARISON).count() == 8
    call_command(
        "create_items", "alpha", "verification", SYSTEM_A, "--n", "2", "--stratify", "domain"
    )
    assert Item.objects.filter(kind=Item.VERIFICATION).count() == 2
    call_command("create_items", str(alpha.pk), "segment", "--k", "1", "--fraction", "0")
    assert Item.objects.filter(kind=Item.SEGMENT).count() == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["comparison", SYSTEM_A], "the following arguments are required: system_b"),
        (["verification", "nope"], "No system 'nope' in alpha; known:"),
        (["comparison", SYSTEM_A, SYSTEM_A], "Pick two different systems"),
        (["comparison", SYSTEM_A, SYSTEM_B, "--k", "5"], "k must be between 1 and 2"),
    ],
)
def test_it_explains_bad_requests(alpha: Project, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("create_items", "alpha", *args)
    assert not Item.objects.exists()
