"""One import-options form for the upload page, the API and `import_data`: which format
(a name of the formats registry, `formats.IMPORT_CHOICES`), the names the file does not
give (system, verifier, source model, FELM's domain), a mapping file for any other
layout, and whether to replace what differs (`update`).

Each surface builds one `ImportOptions` from its input (this form, the API's serializer
through `ImportOptions.from_data`, the command's options) and hands it down whole:
`operations.import_data` -> `ingest.import_file` / `import_upload` / `preview_file`, and a
background job stores it (`ImportJob.options`, `as_record` / `from_record`). A bad value
is an `ImportOptionsError` naming the field, raised when the options are made: the page
shows it on the field (400), the API answers 400 with the field, the command exits 2.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from django import forms

from pipeline.dataformats import FORMATS, decode, mapped
from pipeline.dataformats.common import (
    MAX_DOMAIN,
    MAX_MODEL,
    MAX_SYSTEM,
    ImportFailed,
    bad_value,
)

from .formats import FORMATS as REGISTRY
from .formats import IMPORT_CHOICES

AUTO = "auto"
LIMITS = {"system": MAX_SYSTEM, "verifier": MAX_SYSTEM, "source_model": MAX_MODEL}
LIMITS["domain"] = MAX_DOMAIN


class ImportOptionsError(ValueError):
    """A bad import option: `field` (the form's and the API's name) and what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class ImportOptions:
    """How a file is read and written, checked when made (`ImportOptionsError`).

    fmt: a format the platform reads (`formats.IMPORT_CHOICES`), or "auto": detected from
        the first record. With a mapping file: "mapping" or "auto".
    system: the system of a file's claims when the file does not name it (VeriScore's
        claim files; default: veriscore).
    verifier: the system of a VeriScore file's labels (default: `<system>-verifier`).
    source_model: the model that wrote the responses, when the file does not say.
    domain: FELM's domain of a per-domain file (default: the file's name).
    update: replace stored documents and claim lists that differ (never those with
        annotators' answers); a dry run ignores it.
    mapping: a mapping file's text (YAML or JSON of JMESPath expressions), compiled when
        the file is read (its errors name the mapping file's lines).
    mapping_file: the mapping file's name, in those errors.
    """

    fmt: str = AUTO
    system: str = ""
    source_model: str = ""
    verifier: str = ""
    domain: str = ""
    update: bool = False
    mapping: str = ""
    mapping_file: str = "mapping"

    def __post_init__(self) -> None:
        if self.fmt != AUTO and self.fmt not in FORMATS:
            choices = ", ".join(IMPORT_CHOICES)
            raise ImportOptionsError("format", f"unknown format {self.fmt!r}; one of {choices}")
        if self.mapping and self.fmt not in (AUTO, mapped.NAME):
            raise ImportOptionsError(
                "mapping", f"a mapping file goes with the format 'mapping', not {self.fmt!r}"
            )
        if self.fmt == mapped.NAME and not self.mapping:
            raise ImportOptionsError("mapping", "the format 'mapping' needs a mapping file")
        for name, limit in LIMITS.items():
            value = getattr(self, name)
            problem = bad_value(value)
            if problem:
                raise ImportOptionsError(name, problem[1])
            if len(value) > limit:
                raise ImportOptionsError(name, f"is {len(value)} characters; at most {limit}")

    @property
    def reader(self) -> str:
        """The format a reader is asked for: "mapping" with a mapping file."""
        return mapped.NAME if self.mapping else self.fmt

    @property
    def archive(self) -> bool:
        """A release: read whole into a new project (`release.load`)."""
        return self.fmt != AUTO and REGISTRY[self.fmt].archive

    def reader_options(self) -> dict[str, str]:
        """The options `pipeline.dataformats` reads a file with."""
        return {
            "mapping": self.mapping,
            "system": self.system,
            "source_model": self.source_model,
            "verifier": self.verifier,
            "domain": self.domain,
        }

    def as_record(self) -> dict[str, Any]:
        """As an import job stores it (JSON)."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ImportOptions:
        """The options a job stored (`as_record`); keys it does not know are left out."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in known})

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ImportOptions:
        """From the upload form's or the API's cleaned data: names stripped, the mapping
        file decoded (not UTF-8: an ImportOptionsError on `mapping`)."""
        mapping, mapping_file = "", "mapping"
        upload = data.get("mapping")
        if upload:
            mapping_file = upload.name or mapping_file
            try:
                mapping = decode(upload.read(), mapping_file)
            except ImportFailed as e:
                raise ImportOptionsError("mapping", e.errors[0].message) from None
        return cls(
            fmt=data.get("format") or AUTO,
            system=(data.get("system") or "").strip(),
            source_model=(data.get("source_model") or "").strip(),
            verifier=(data.get("verifier") or "").strip(),
            domain=(data.get("domain") or "").strip(),
            update=bool(data.get("update")),
            mapping=mapping,
            mapping_file=mapping_file,
        )


def format_choices() -> list[tuple[str, str]]:
    """The form's choices of format: "Detect", then each format the platform reads (by
    name: a description would widen the menu past a phone's screen)."""
    return [(AUTO, "Detect")] + [(name, name) for name in IMPORT_CHOICES[1:]]


class ImportForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(choices=format_choices)
    system = forms.CharField(
        required=False, help_text="System name for VeriScore claim files (default: veriscore)."
    )
    source_model = forms.CharField(
        required=False, help_text="Model that wrote the responses, when the file does not say."
    )
    verifier = forms.CharField(
        required=False,
        help_text="System name for the labels of VeriScore verification files "
        "(default: the system name followed by “-verifier”).",
    )
    domain = forms.CharField(
        required=False,
        help_text="FELM: the domain of a per-domain file (default: the file's name).",
    )
    mapping = forms.FileField(
        required=False,
        help_text="Any other layout: a mapping file (YAML or JSON) of JMESPath expressions.",
    )
    update = forms.BooleanField(
        required=False,
        help_text="Replace stored documents and claim lists that differ "
        "(never those with annotators' answers).",
    )
    dry_run = forms.BooleanField(
        required=False,
        label="Preview only",
        help_text="Validate the file and show its first records as they would be stored; "
        "import nothing.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            try:
                self.import_options = ImportOptions.from_data(data)
            except ImportOptionsError as e:
                self.add_error(e.field if e.field in self.fields else None, e.message)
        return data

    def options(self) -> ImportOptions:
        """The import's options (a valid form)."""
        return self.import_options
