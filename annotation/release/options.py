"""What the researcher chooses for a release: the licence, the card's header values and
the free-text parts of the card (each has a default written from the project, editable
before the release is built)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from ..models import Project
from .study import Study, kind_titles, read_study, stated_facts

# licence ids the Hub knows (its `license:` metadata)
LICENCES = (
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc0-1.0",
    "odc-by",
    "odbl",
    "mit",
    "apache-2.0",
    "other",
)
TASK_CATEGORIES = (
    "text-classification",
    "token-classification",
    "question-answering",
    "text-generation",
    "summarization",
)
MAX_TEXT = 20_000

# the free-text parts of the card, in the order the page shows them
FREE_TEXT = ("summary", "limitations", "source_data", "demographics", "citation")


@dataclass(frozen=True)
class ReleaseOptions:
    license: str = "cc-by-4.0"
    languages: tuple[str, ...] = ("en",)
    task_categories: tuple[str, ...] = ("text-classification",)
    pretty_name: str = ""
    summary: str = ""  # what was annotated, and why
    limitations: str = ""
    source_data: str = ""  # where the items came from, under which licences
    demographics: str = ""  # who the annotators were: only what the researcher supplies
    citation: str = ""
    source_licences: tuple[str, ...] = ()  # licence files under fixtures/ to copy
    bootstrap: int = 1000  # resamples of the agreement intervals

    def with_defaults(self, project: Project, study: Study | None = None) -> ReleaseOptions:
        """Empty free-text parts filled with the project's defaults (demographics and
        the citation stay empty unless supplied)."""
        defaults = card_defaults(project, study)
        filled: dict[str, Any] = {
            f.name: defaults[f.name]
            for f in fields(self)
            if f.name in defaults and not getattr(self, f.name).strip()
        }
        return replace(self, **filled)


def stated_options(project: Project) -> ReleaseOptions | None:
    """The options of the release the project was imported from (its study.json), None
    for a project of its own."""
    card = stated_facts(project).get("card")
    return options_from_json(card) if isinstance(card, dict) else None


def options_json(options: ReleaseOptions) -> dict[str, Any]:
    """The options as JSON (lists for tuples): study.json's card, a release job's."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(options).items()}


def options_from_json(data: dict[str, Any]) -> ReleaseOptions:
    known = {f.name for f in fields(ReleaseOptions)}
    values: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known
    }
    return ReleaseOptions(**values)


def project_options(project: Project, study: Study | None = None) -> ReleaseOptions:
    """What a release of the project starts from: the options of the release it was
    imported from, else the defaults; empty free-text parts written from the project."""
    return (stated_options(project) or ReleaseOptions()).with_defaults(project, study)


def card_defaults(project: Project, study: Study | None = None) -> dict[str, str]:
    """The card's free-text parts as written from the project (as the release it was
    imported from states them, for an imported project), for the researcher to edit."""
    stated = stated_options(project)
    if stated is not None:
        texts = {"pretty_name": stated.pretty_name} | {n: getattr(stated, n) for n in FREE_TEXT}
        return {k: v for k, v in texts.items() if v.strip()} | {
            k: v for k, v in _written(project, study).items() if not texts.get(k, "").strip()
        }
    return _written(project, study)


def _written(project: Project, study: Study | None) -> dict[str, str]:
    study = study or read_study(project)
    titles = kind_titles()
    made = ", ".join(
        f"{n} {titles.get(k, k).lower()} items" for k, n in sorted(study.kinds.items())
    )
    origins = sorted({s["origin"] for s in study.systems if s["kind"] != "verifier"})
    return {
        "pretty_name": project.name,
        "summary": (
            f"{project.description}\n\nHuman annotations of LLM factuality collected for the "
            f'study "{project.name}": {made or "no items yet"}, each answered by '
            "several annotators; the raw per-annotator labels, the gold labels with the rule "
            "that decided them, the items as shown, and the outputs of the automatic metrics."
        ).strip(),
        "limitations": (
            "The annotators are few and not a sample of any population; their agreement "
            "(see Agreement) bounds how far the gold labels can be trusted. Search results are "
            "snapshots from the time of the study: the linked pages may have changed. "
            "Gold labels decided by a tie rule or with low confidence deserve a second look."
        ),
        "source_data": (
            "The documents, claims and labels come from: "
            + (", ".join(origins) if origins else "files of the researchers")
            + ". The source data keeps its own licence (see LICENSES/ when present)."
        ),
    }
