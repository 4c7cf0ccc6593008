"""The release's tables: their columns, types and descriptions, read by the Parquet
writer, the dataset card and the Croissant file alike."""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    name: str
    type: str  # string, int, float, bool
    description: str


class TableSpec(NamedTuple):
    name: str
    description: str
    columns: tuple[Column, ...]


S, INT, F, B = "string", "int", "float", "bool"
JSON = " (JSON text)"

ITEMS = TableSpec(
    "items",
    "One row per item as annotators were shown it: the document, the claim with its "
    "search results, the claim lists, the response's segments.",
    (
        Column("item", INT, "the item's number in this release"),
        Column("kind", S, "comparison, verification, segment or atomic"),
        Column("role", S, "regular, training, check or example (shown under the instructions)"),
        Column("document", S, "the document's id in the source data"),
        Column("domain", S, "the document's domain"),
        Column("question", S, "the prompt the response answers"),
        Column("response", S, "the response whose claims are judged"),
        Column("source_model", S, "the model that wrote the response"),
        Column("claim", S, "the claim judged (verification items)"),
        Column("claim_system", S, "the system whose claim list holds the claim"),
        Column("claim_position", INT, "the claim's position in that list"),
        Column("evidence", S, "the search results shown: rank, title, link, snippet" + JSON),
        Column("list_a_system", S, "the system of the first claim list"),
        Column("list_a_claims", S, "the first claim list" + JSON),
        Column("list_b_system", S, "the system of the second claim list"),
        Column("list_b_claims", S, "the second claim list" + JSON),
        Column(
            "segments",
            S,
            "the response's segments: position, text (an empty one is never shown)" + JSON,
        ),
        Column("units", S, "the unit.field pairs the item asks" + JSON),
        Column("reference", S, "training, check and example items: the known answer" + JSON),
        Column("explanation", S, "training and example items: why the answer is right"),
    ),
)

ANNOTATIONS = TableSpec(
    "annotations",
    "One row per annotator per unit and field: every submitted answer, pseudonymous.",
    (
        Column("item", INT, "the item's number (items.item)"),
        Column("kind", S, "the item's kind"),
        Column("annotator", S, "the annotator's pseudonym, fixed for the project"),
        Column("unit", S, "the part of the item answered: item, evidence:<rank>, ..."),
        Column("field", S, "the question answered"),
        Column("value", S, "the answer as annotators are compared (a system's name for a choice)"),
        Column("value_as_stored", S, "the answer as given on the page (list 1 / list 2)"),
        Column("presented_swapped", B, "the two claim lists were shown in swapped order"),
        Column("guideline_version", INT, "the instructions' version the annotator had read"),
        Column("active_seconds", F, "the annotator's active time on the item"),
        Column("item_role", S, "regular, training or check"),
        Column("check_passed", B, "training and check items: the answer matched the reference"),
    ),
)

GOLD = TableSpec(
    "gold",
    "One row per answered unit of the regular items: the gold value and how it was decided.",
    (
        Column("item", INT, "the item's number (items.item)"),
        Column("kind", S, "the item's kind"),
        Column("unit", S, "the unit"),
        Column("field", S, "the question"),
        Column("value", S, "the gold value as annotations.value names it; empty: no gold"),
        Column("value_code", S, "the gold value as the kind compares answers"),
        Column("decided_by", S, "adjudicated, unanimous, majority, tie-rule or tie"),
        Column("method", S, "the gold method (adjudicated for a researcher's value)"),
        Column("confidence", F, "the method's confidence (majority: the value's vote share)"),
        Column("votes", S, "value -> number of annotators" + JSON),
        Column("annotations", INT, "answers to this unit"),
        Column("note", S, "the adjudicator's note"),
    ),
)

METRIC_OUTPUTS = TableSpec(
    "metric_outputs",
    "Claims of every extractor and the verdicts on them, with how each was made.",
    (
        Column("document", S, "the document's id in the source data"),
        Column("extractor", S, "the system that extracted the claim"),
        Column("extractor_origin", S, "pipeline (a run here) or import:<format>"),
        Column("extraction_model", S, "the extraction model"),
        Column("extraction_prompt_version", S, "the extraction prompts' version"),
        Column("claim_position", INT, "the claim's position in its list"),
        Column("claim", S, "the claim"),
        Column("verifier", S, "the system that judged it"),
        Column("verifier_kind", S, "verifier, or reference (imported human labels)"),
        Column("verifier_origin", S, "pipeline (a run here) or import:<format>"),
        Column("verification_model", S, "the verification model"),
        Column("verification_prompt_version", S, "the verification prompts' version"),
        Column("verdict", S, "the verifier's label"),
        Column("mode", S, "default, or the reference mode (veriscore, verifastscore)"),
        Column("templates", S, "the prompt templates; a folder of prompts has its hash"),
        Column("label_mode", S, "binary or ternary labels"),
    ),
)

AGREEMENT = TableSpec(
    "agreement",
    "The report's agreement and verifier tables, one row per cell, with their intervals "
    "(its listings of single units are left out: they follow from annotations and gold).",
    (
        Column("section", S, "the report's section"),
        Column("table", S, "the table's name"),
        Column("table_title", S, "the table's title"),
        Column("row", INT, "the row's number in the table"),
        Column("column", S, "the column"),
        Column("value", S, "the cell as text"),
        Column("note", S, "the table's note"),
    ),
)

TABLES = (ITEMS, ANNOTATIONS, GOLD, METRIC_OUTPUTS, AGREEMENT)
