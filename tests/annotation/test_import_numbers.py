"""Identity survives the database: PostgreSQL jsonb returns large floats as exact integers."""

import json

from annotation.ingest import import_file
from annotation.models import Project


def test_a_large_float_in_metadata_is_already_present_after_a_round_trip(db):
    project = Project.objects.create(name="p")
    text = json.dumps(
        {"id": "d1", "response": "A text.", "metadata": {"x": 1.5e300, "y": [2.5e-300, 7]}}
    )
    import_file(project=project, text=text, file="f.jsonl")
    again = import_file(project=project, text=text, file="f.jsonl")
    assert again.documents_existing == 1 and again.documents_created == 0
