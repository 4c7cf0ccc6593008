"""A project released as a dataset (issue 40), proved with the field's own tools: the
Hub's `datasets` loads every configuration offline, `mlcroissant` validates the
Croissant file and reads every record set equal to the Parquet files, and
`huggingface_hub` parses the card. Nothing here touches the network."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

# the Hub's libraries read these when imported: set before they are
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import pyarrow.parquet as pq
import pytest
import yaml

from annotation.models import Project
from annotation.release import (
    TABLES,
    ReleaseOptions,
    ReleaseRefused,
    available_licences,
    build_release,
    personal_terms,
)
from annotation.release.croissant import sha256

from .release_helpers import answer_everything, hired_project, release_texts

DEMO_LICENCES = ("demo/LICENSE.factscore.MIT.txt", "pipeline/LICENSE.Apache-2.0.txt")


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    return cache


def _parquet_rows(folder: Path, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(folder / "data" / f"{table}.parquet").to_pylist()
    return rows


def _plain(value: Any) -> Any:
    """A value as mlcroissant yields it, compared with Parquet's (text comes as bytes,
    a missing number as NaN)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    return value


def _check_datasets(folder: Path, rows: dict[str, int], cache: Path) -> None:
    import datasets

    for spec in TABLES:
        loaded = datasets.load_dataset(str(folder), spec.name, cache_dir=str(cache))
        assert loaded["train"].num_rows == rows[spec.name], spec.name
        assert loaded["train"].column_names == [c.name for c in spec.columns]


def _check_croissant(folder: Path) -> None:
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=folder / "croissant.json")
    meta = dataset.metadata
    assert meta.annotations_per_item and meta.data_annotation_protocol
    assert meta.data_annotation_platform and meta.data_annotation_analysis
    assert meta.annotator_demographics in (None, [])  # not supplied
    assert any("veriscore" in tool for tool in meta.machine_annotation_tools or [])
    for spec in TABLES:
        expected = _parquet_rows(folder, spec.name)
        got = [
            {k.split("/", 1)[1]: _plain(v) for k, v in record.items()}
            for record in dataset.records(record_set=spec.name)
        ]
        assert got == [{k: _plain(v) for k, v in row.items()} for row in expected], spec.name
    written = json.loads((folder / "croissant.json").read_text())
    for f in written["distribution"]:
        assert f["sha256"] == sha256(folder / f["contentUrl"])


def _check_card(folder: Path) -> None:
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(folder / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0"
    assert {c["config_name"] for c in data["configs"]} == {t.name for t in TABLES}
    for c in data["configs"]:
        assert (folder / c["data_files"][0]["path"]).is_file()
    assert data["size_categories"] == ["1K<n<10K"]
    front = yaml.safe_load(card.content.split("---")[1])
    assert front["language"] == ["en"]


def test_a_release_of_the_demo_loads_with_the_hubs_tools(
    demo: Project, tmp_path: Path, hf_cache: Path
) -> None:
    answered = answer_everything(demo)
    options = ReleaseOptions(license="cc-by-sa-4.0", source_licences=DEMO_LICENCES, bootstrap=200)
    release = build_release(demo, tmp_path / "demo-release", options, make_zip=True)
    folder = release.folder
    rows = release.rows
    assert rows["items"] == demo.items.count()
    assert rows["annotations"] > answered  # several units per item
    assert rows["gold"] and rows["metric_outputs"] and rows["agreement"]
    for spec in TABLES:  # the JSON lines hold the same rows as the Parquet file
        lines = (folder / "jsonl" / f"{spec.name}.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == _parquet_rows(folder, spec.name)
    _check_datasets(folder, rows, hf_cache)
    _check_croissant(folder)
    _check_card(folder)
    text = (folder / "README.md").read_text()
    assert demo.instructions in text  # verbatim
    assert f"version {demo.instructions_version}" in text
    assert "LICENSES/demo/LICENSE.factscore.MIT.txt" in text
    assert (folder / "LICENSES" / "demo" / "LICENSE.factscore.MIT.txt").is_file()
    assert release.zip is not None
    with zipfile.ZipFile(release.zip) as z:
        assert "demo-release/croissant.json" in z.namelist()
        assert len(z.namelist()) == len([p for p in folder.rglob("*") if p.is_file()])


def test_nothing_personal_in_any_file(db: None, tmp_path: Path) -> None:
    project, secrets = hired_project()
    assert {s for s in secrets if len(s) >= 6} <= personal_terms(project)
    assert answer_everything(project) == 6 * 7
    release = build_release(project, tmp_path / "r", ReleaseOptions(bootstrap=50), make_zip=True)
    texts = release_texts(release.folder)
    assert release.rows["annotations"] > 0
    for name, text in texts.items():
        for secret in secrets:
            assert secret not in text, (name, secret)
    with zipfile.ZipFile(release.zip or "") as z:
        for info in z.infolist():
            data = z.read(info).decode("utf-8", errors="replace")
            assert not any(s in data for s in secrets), info.filename


def test_free_text_naming_a_member_is_refused(db: None, tmp_path: Path) -> None:
    project, _ = hired_project()
    for part in ("summary", "limitations", "source_data", "demographics", "citation"):
        named: dict[str, Any] = {part: "thanks to Bartholomew1"}
        with pytest.raises(ReleaseRefused, match="nothing personal"):
            build_release(project, tmp_path / part, ReleaseOptions(**named))
        assert not (tmp_path / part).exists()


def test_unknown_licence_files_and_used_folders_are_refused(db: None, tmp_path: Path) -> None:
    project, _ = hired_project()
    assert "demo/LICENSE.factscore.MIT.txt" in available_licences()
    with pytest.raises(ReleaseRefused, match="unknown licence file"):
        build_release(
            project, tmp_path / "a", ReleaseOptions(source_licences=("../../etc/passwd",))
        )
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    with pytest.raises(ReleaseRefused, match="not an empty folder"):
        build_release(project, used, ReleaseOptions())
    assert (used / "keep.txt").read_text() == "mine"


def test_a_build_that_fails_leaves_nothing_at_its_folder(
    db: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that fails after writing some tables (here the metric outputs cannot be
    read) leaves no release, not even a partial folder beside it."""
    from annotation.release import tables

    project, _ = hired_project()
    answer_everything(project)

    def broken(*args: Any) -> Any:
        raise OSError("disk full")
        yield  # a generator, as the real reader

    monkeypatch.setattr(tables, "metric_rows", broken)
    with pytest.raises(OSError, match="disk full"):
        build_release(project, tmp_path / "out", ReleaseOptions(bootstrap=0))
    assert list(tmp_path.iterdir()) == []
