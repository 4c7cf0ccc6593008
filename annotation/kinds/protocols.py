"""What each part of the code needs of a kind, as small protocols: `Kind` (its name and
fields: what everything reads), `PageKind` (the annotator's page, the API and creating
items), `LabelStudioKind` (the Label Studio mapping), `GoldKind` (gold values, training
references, adaptive overlap) and `ReportKind` (the report's kind sections, verifiers
against gold, exports).

`KindSpec` (base.py) implements them all with defaults; a kind subclasses it and writes
the parts it uses: the `REQUIRED` parts of `PageKind` and `LabelStudioKind` (the registry
refuses a kind without them), and of `GoldKind` and `ReportKind` only what differs from
the defaults (a kind without report sections or verdicts writes none of them). A
function that needs one part of a kind takes that protocol, so mypy shows what it reads;
`kinds.page`, `kinds.gold`, `kinds.report` and `kinds.labelstudio` give a registered
kind typed as one part."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from django.db.models import Model, QuerySet

    from ..answers import Answers
    from ..forms import AnswerForm, PolicyForm
    from ..gold import Gold
    from ..models import Assignment, Item, Project, Verdict
    from ..reports.tables import Section
    from .base import Agreement, Field, ItemInfo, Target


# The methods a kind writes itself for each part that has no default (KindSpec.REQUIRED)
PAGE_REQUIRED = ("view", "form", "expected", "items_form")
LABEL_STUDIO_REQUIRED = ("label_config", "ls_task")


class Kind(Protocol):
    """What every part reads: the kind's name and its fields, their values as compared
    across annotators, and the (unit, field) pairs an item asks."""

    name: str
    title: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None: ...

    def categorical(self, project: Project | None = None) -> dict[str, list[str]]: ...

    def comparable(self, field: str, value: str, swapped: bool) -> str: ...

    def value_label(self, field: str, value: str) -> str: ...

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]: ...


class PageKind(Kind, Protocol):
    """The annotator's page (its template, keys and what it shows), the API's view of an
    item, the adjudication page, and the items form and `create_items` options."""

    template: str
    keys: tuple[tuple[tuple[str, ...], str], ...]
    view_keys: Mapping[str, str]
    items_help: str
    ordered: bool

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]: ...

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm: ...

    def page_context(self, view: dict[str, Any], form: AnswerForm) -> dict[str, Any]: ...

    def queue_text(self, item: Item) -> str: ...

    def seen_as(self, swapped: bool) -> str: ...

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]: ...

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm: ...

    def add_arguments(self, parser: ArgumentParser) -> None: ...

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]: ...


class LabelStudioKind(Kind, Protocol):
    """The kind's Label Studio labelling config and tasks, and its answers both ways."""

    ordered: bool

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]: ...

    def ls_slots(self, items: list[Item]) -> int: ...

    def label_config(self, slots: int, project: Project) -> str: ...

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]: ...

    def ls_to_name(self, unit: str, field: str) -> str: ...

    def from_ls_name(self, name: str) -> tuple[str, str]: ...

    def ls_result(self, answers: dict[tuple[str, str], str]) -> list[dict[str, Any]]: ...


class GoldKind(Kind, Protocol):
    """Gold values (a tie's value), a training or check item's reference answer, and the
    rule adaptive overlap follows; all have defaults in KindSpec."""

    tie_values: Mapping[str, str]
    main_field: str

    def tie_value(self, field: str) -> str | None: ...

    def disagrees(self, field: str, answers: list[dict[tuple[str, str], str]]) -> bool: ...

    def reference_from(self, item: Item, verdicts: QuerySet[Verdict]) -> dict[str, str]: ...

    def as_verdict(self, value: str | None) -> str | None: ...


class KindSection(Protocol):
    """The builder of a kind's own report section (in its folder's report.py): None when
    the project has nothing to show."""

    def __call__(
        self,
        project: Project,
        spec: ReportKind,
        answers: Answers,
        golds: list[Gold],
        *,
        with_charts: bool,
    ) -> Section | None: ...


class ReportKind(Kind, Protocol):
    """The report: agreement fields, the kind's own sections, the verdicts automatic
    systems give on its units; the exports' values. All have defaults in KindSpec."""

    agreement: tuple[Agreement, ...]
    report_sections: tuple[str, ...]
    verdict_field: str
    verdict_level: str
    verdict_modes: tuple[str, ...]
    main_field: str

    @property
    def verdict_target(self) -> type[Model] | None: ...

    def report_section(self, slug: str) -> KindSection: ...

    def verdict_targets(self, project: Project, golds: list[Gold]) -> list[Target]: ...

    def fact_verdicts(
        self, project: Project, golds: list[Gold] | None = None
    ) -> dict[int, str]: ...

    def as_verdict(self, value: str | None) -> str | None: ...

    def tie_value(self, field: str) -> str | None: ...

    def export_value(
        self, field: str, value: str, systems: tuple[str | None, str | None]
    ) -> str: ...

    def presented_systems(self, assignment: Assignment) -> tuple[str | None, str | None]: ...
