"""A project released as a dataset (issue 40): a folder the Hub's `datasets` library reads
without a loading script, one configuration per table (items, annotations, gold,
metric_outputs, agreement) in Parquet and JSON lines, a dataset card (README.md with the
Hub's YAML header) and croissant.json (Croissant 1.0 with its Responsible-AI fields).

`tables.py` reads the rows (pseudonyms only), `study.py` what the card says of the study,
`card.py`, `stated.py` (study.json) and `croissant.py` write the metadata, `build.py` the
files, `jobs.py` builds them on the task worker for the page and the API; `load.py`
imports a release back.
"""

from __future__ import annotations

from .build import (
    Release,
    ReleaseRefused,
    build_release,
    personal_terms,
    zip_folder,
)
from .forms import ReleaseForm
from .options import (
    FREE_TEXT,
    LICENCES,
    TASK_CATEGORIES,
    ReleaseOptions,
    card_defaults,
    project_options,
)
from .schema import TABLES
from .study import available_licences

__all__ = [
    "FREE_TEXT",
    "LICENCES",
    "TABLES",
    "TASK_CATEGORIES",
    "Release",
    "ReleaseForm",
    "ReleaseOptions",
    "ReleaseRefused",
    "available_licences",
    "build_release",
    "card_defaults",
    "personal_terms",
    "project_options",
    "zip_folder",
]
