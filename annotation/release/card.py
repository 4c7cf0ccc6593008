"""The dataset card: README.md with the Hub's YAML header (licence, task categories,
languages, size category, one configuration per table pointing at its Parquet file),
its body written from the project (`study.Study`) and the researcher's free text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from ..reports.tables import Section, Table
from .options import ReleaseOptions
from .schema import TABLES, TableSpec
from .study import Study, kind_titles
from .tables import released_tables

CARD_ROWS = 25  # rows of a report table the card shows (the agreement config has all)
SIZES: tuple[tuple[int, str], ...] = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
)


def parquet_path(table: str) -> str:
    return f"data/{table}.parquet"


def jsonl_path(table: str) -> str:
    return f"jsonl/{table}.jsonl"


def size_category(rows: int) -> str:
    return next((name for limit, name in SIZES if rows < limit), "100M<n<1B")


def header(options: ReleaseOptions, rows: dict[str, int]) -> dict[str, Any]:
    return {
        "license": options.license,
        "language": list(options.languages),
        "task_categories": list(options.task_categories),
        "size_categories": [size_category(rows.get("annotations", 0))],
        "pretty_name": options.pretty_name,
        "tags": ["factuality", "human-annotation", "croissant"],
        "configs": [
            {
                "config_name": t.name,
                "data_files": [{"split": "train", "path": parquet_path(t.name)}],
                **({"default": True} if t.name == "annotations" else {}),
            }
            for t in TABLES
        ],
    }


def _fence(text: str) -> str:
    ticks = "`" * max(3, max((len(r) for r in text.split("\n") if set(r) == {"`"}), default=0) + 1)
    return f"{ticks}text\n{text}\n{ticks}"


def _md_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def _configs(rows: dict[str, int]) -> str:
    out = [
        _md_table(
            ("configuration", "rows", "Parquet", "JSONL", "what"),
            [
                (
                    t.name,
                    rows.get(t.name, 0),
                    parquet_path(t.name),
                    jsonl_path(t.name),
                    t.description,
                )
                for t in TABLES
            ],
        )
    ]
    for t in TABLES:
        out.append(f"\n### `{t.name}`\n\n" + _columns(t))
    return "\n".join(out)


def _columns(t: TableSpec) -> str:
    return _md_table(
        ("column", "type", "meaning"), [(c.name, c.type, c.description) for c in t.columns]
    )


def _design(study: Study) -> str:
    titles = kind_titles()
    made = [f"- {n} {titles.get(k, k)} items" for k, n in sorted(study.kinds.items())]
    roles = study.roles
    lines = [*made, ""]
    if study.per_item:
        low, high, mean = study.per_item
        lines.append(f"Annotators per regular item: {low} to {high} (mean {mean:.2f}).")
    training, checks = roles.get("training", 0), roles.get("check", 0)
    lines.append(
        f"Training items: {training}"
        + (
            f" (pass mark: {study.pass_mark:.0%} of units like the reference)"
            if training and study.pass_mark is not None
            else ""
        )
        + f". Known-answer check items: {checks}"
        + (
            f", mixed into {study.check_rate:.0%} of a new queue"
            if checks and study.check_rate
            else ""
        )
        + (
            f"; an annotator whose check accuracy fell below {study.pause_below:.0%} was paused"
            if checks and study.pause_below is not None
            else ""
        )  # fmt: skip
        + f". Worked examples under the instructions: {roles.get('example', 0)}."
    )
    lines.append(
        "Training, check and example items are in `items` with their role and reference; "
        "their answers are in `annotations` (with `check_passed`) and are left out of gold "
        "and agreement."
    )
    return "\n".join(lines)


def _pay(study: Study, demographics: str) -> str:
    lines = [f"Annotators who submitted answers: {study.annotators}."]
    if study.median_seconds:
        lines.append(f"Median active time per item: {study.median_seconds:.1f} s.")
    if study.pay_per_item:
        hourly = study.hourly_pay
        lines.append(
            f"Pay (in the currency of the hiring policy): {study.pay_per_item} per item"
            + (
                f", a bonus of {study.pay_per_check} per correct check"
                if study.pay_per_check
                else ""
            )
            + (
                f"; at the median active time that is {hourly} per hour (effective hourly pay)."
                if hourly is not None
                else "."
            )  # fmt: skip
        )
    else:
        lines.append(
            "No pay rate was recorded on the platform (annotators were not paid per item here)."
        )
    lines.append(
        "\n**Who the annotators were:** "
        + (
            demographics.strip()
            or "not collected; nothing is known of them beyond their work here."
        )
    )
    return "\n".join(lines)


def _exclusions(study: Study) -> str:
    if not study.hired:
        return "No annotator was hired through an invite link: no one was screened out or returned."
    parts = ", ".join(f"{status}: {n}" for status, n in sorted(study.hired.items()))
    return (
        f"People hired through invite links, by outcome: {parts}. Screened-out people "
        "(failed training, paused on checks, careless answering"
        + (f", action: {study.careless_action}" if study.careless_action else "")
        + ") and returned places keep the answers they submitted in `annotations`."
    )


def _agreement(sections: list[Section]) -> str:
    out = []
    for section in sections:
        if section.error:
            out.append(f"{section.title}: could not be computed ({section.error}).")
        for table in released_tables(section):
            out.append(_report_table(table))
    return "\n\n".join(out) or "No agreement could be computed (too few overlapping answers)."


def _report_table(table: Table) -> str:
    shown = table.rows[:CARD_ROWS]
    more = len(table.rows) - len(shown)
    text = f"**{table.title}**\n\n" + _md_table(table.columns, shown)
    if more:
        text += f"\n\n({more} more rows in the `agreement` configuration, table `{table.name}`.)"
    if table.note:
        text += f"\n\n{table.note}"
    return text


def _examples(study: Study) -> str:
    if not study.examples:
        return "None."
    out = []
    for i, e in enumerate(study.examples, 1):
        answers = ", ".join(f"{k} = {v}" for k, v in sorted(e.answers.items()))
        out.append(f"{i}. {e.kind}: {answers}\n\n" + _fence(e.explanation))
    return "\n\n".join(out)


def _systems(study: Study) -> str:
    if not study.systems:
        return "No automatic metric ran on these items."
    return _md_table(
        ("system", "kind", "origin", "model", "prompt version"),
        [
            (s["name"], s["kind"], s["origin"], s["model"], s["prompt_version"])
            for s in study.systems
        ],
    )


GOLD_RULE = (
    "A unit's gold value is the researcher's adjudicated value where one was set "
    "(`decided_by` = adjudicated); otherwise the project's gold method on the annotators' "
    "answers: {method}. Majority: the unanimous or majority value, its vote share as "
    "`confidence`; a tie gives the kind's tie value (a verification claim: "
    "inconclusive-not-enough, VeriScore's rule; `decided_by` = tie-rule) or no gold "
    "(`decided_by` = tie) until adjudicated."
)


def body(
    study: Study,
    options: ReleaseOptions,
    rows: dict[str, int],
    sections: list[Section],
    method: str,
    licences: list[str],
) -> str:
    parts = [
        f"# {options.pretty_name}",
        options.summary.strip(),
        "## Configurations\n\nEach table is a configuration (Parquet, the same rows as JSON "
        "lines beside it); `croissant.json` describes them in Croissant 1.0 with its "
        "Responsible-AI fields.\n\n" + _configs(rows),
        "## What was annotated\n\n" + _design(study),
        f"## Instructions (version {study.instructions_version}, verbatim)\n\n"
        + _fence(study.instructions or "(none)"),
        "## Worked examples (verbatim)\n\n" + _examples(study),
        "## Annotators, recruitment and pay\n\n" + _pay(study, options.demographics),
        "## Exclusions\n\n" + _exclusions(study),
        "## Agreement\n\nWith 95% bootstrap intervals over units "
        f"({options.bootstrap} resamples).\n\n" + _agreement(sections),
        "## Gold labels\n\n" + GOLD_RULE.format(method=method),
        "## Metric outputs\n\n" + _systems(study),
        "## Limitations\n\n" + options.limitations.strip(),
        "## Source data and licences\n\n"
        + options.source_data.strip()
        + "".join(f"\n- `LICENSES/{name}`" for name in licences),
        "## Personal data\n\nAnnotators are named by pseudonyms (A1, A2, ...). No account "
        "name, email address, crowd worker id, IP address or browser id is in any file.",
    ]
    if options.citation.strip():
        parts.append("## Citation\n\n" + _fence(options.citation.strip()))
    return "\n\n".join(p for p in parts if p) + "\n"


def card_text(front: dict[str, Any], text: str) -> str:
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n" + text
