"""croissant.json: Croissant 1.0 metadata with the Responsible-AI vocabulary, one record
set per configuration (read from its Parquet file), every file with its sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .card import jsonl_path, parquet_path
from .options import ReleaseOptions
from .schema import TABLES
from .stated import FILE as STUDY_FILE
from .study import Study

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
DATA_TYPES = {"string": "sc:Text", "int": "sc:Integer", "float": "sc:Float", "bool": "sc:Boolean"}
PARQUET = "application/x-parquet"
JSONL = "application/jsonlines"

# the Croissant 1.0 context, as mlcroissant writes it
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file(folder: Path, path: str, fmt: str, description: str) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": path,
        "name": path,
        "description": description,
        "contentUrl": path,
        "encodingFormat": fmt,
        "sha256": sha256(folder / path),
    }


def _record_sets() -> list[dict[str, Any]]:
    return [
        {
            "@type": "cr:RecordSet",
            "@id": t.name,
            "name": t.name,
            "description": t.description,
            "field": [
                {
                    "@type": "cr:Field",
                    "@id": f"{t.name}/{c.name}",
                    "name": c.name,
                    "description": c.description,
                    "dataType": DATA_TYPES[c.type],
                    "source": {
                        "fileObject": {"@id": parquet_path(t.name)},
                        "extract": {"column": c.name},
                    },
                }
                for c in t.columns
            ],
        }
        for t in TABLES
    ]


def _rai(study: Study, options: ReleaseOptions, method: str) -> dict[str, Any]:
    rai: dict[str, Any] = {
        "rai:dataAnnotationProtocol": (
            f"Instructions version {study.instructions_version} (verbatim in README.md), "
            f"{study.roles.get('example', 0)} worked examples, "
            f"{study.roles.get('training', 0)} training items, "
            f"{study.roles.get('check', 0)} known-answer check items."
        ),
        "rai:dataAnnotationPlatform": (
            "The factuality annotation platform (Django), annotators working in a web "
            "page per item" + ("; hired through invite links" if study.hired else "")
        ),
        "rai:dataAnnotationAnalysis": [
            "Inter-annotator agreement with 95% bootstrap intervals (configuration "
            "agreement); verifiers against the human gold labels.",
            f"Gold labels: adjudicated where set, else {method}.",
        ],
        "rai:annotationsPerItem": (
            f"{study.per_item[0]} to {study.per_item[1]} (mean {study.per_item[2]:.2f})"
            if study.per_item
            else "none"
        ),
        "rai:machineAnnotationTools": [
            " ".join(p for p in (s["name"], s["model"], s["prompt_version"]) if p)
            for s in study.systems
            if s["origin"] == "pipeline" or s["model"]
        ],
    }
    if options.demographics.strip():
        rai["rai:annotatorDemographics"] = [options.demographics.strip()]
    return rai


def croissant(
    folder: Path, study: Study, options: ReleaseOptions, method: str, published: str
) -> dict[str, Any]:
    files = []
    for t in TABLES:
        files.append(_file(folder, parquet_path(t.name), PARQUET, f"{t.name} (Parquet)"))
        files.append(_file(folder, jsonl_path(t.name), JSONL, f"{t.name} (JSON lines)"))
    files.append(
        _file(
            folder,
            STUDY_FILE,
            "application/json",
            "what the release states of its study: instructions, design, pay, the card's "
            "options, the gold method (read back when the release is imported)",
        )
    )
    meta: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": options.pretty_name,
        "description": options.summary.strip() or options.pretty_name,
        "license": options.license,
        "inLanguage": list(options.languages),
        "datePublished": published,
        "distribution": files,
        "recordSet": _record_sets(),
        **_rai(study, options, method),
    }
    if options.citation.strip():
        meta["citeAs"] = options.citation.strip()
    return meta
