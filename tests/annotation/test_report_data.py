"""answers.collector_paused: the report's bulk reads run without the cyclic
collector, which is back as it was afterwards, also after an error; answers.fetch and
chunks on an empty id list."""

from __future__ import annotations

import gc

import pytest

from annotation.answers import chunks, collector_paused, fetch
from annotation.models import Item, Project


def test_the_collector_is_off_inside_and_back_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off, and the outer one turns it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_turns_it_back_on() -> None:
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_fetch_and_chunks_give_no_row_for_an_empty_id_list(
    alpha: Project, alpha_items: list[Item]
) -> None:
    """Django sends no query for `IN ()` (EmptyResultSet): the reports' cursor readers give
    no row, as the ORM does, instead of raising."""
    for empty in (Item.objects.filter(pk__in=[]), Item.objects.filter(pk__in=[], project=alpha)):
        rows = empty.values_list("pk", "kind")
        assert list(rows) == [] and fetch(rows) == [] and list(chunks(rows)) == []
    some = Item.objects.filter(project=alpha).values_list("pk").order_by("pk")
    assert len(some) == 4
    assert fetch(some) == [(pk,) for (pk,) in some] == [r for c in chunks(some, 1) for r in c]
