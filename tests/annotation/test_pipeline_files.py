"""The pipeline's output files are written by the platform's VeriScore module: each file is
exactly what `pipeline.dataformats.veriscore` writes for the records it holds, and it
imports into the platform and exports back unchanged; failed sentences and claims too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation import formats
from annotation.ingest import import_file
from annotation.models import Project
from pipeline.dataformats import parse_file, veriscore
from pipeline.fakes import FakeOpenAI, FakeSerper

from ..pipeline.test_cli import cli, endpoints, read, write_input

STAGES = ("claims", "evidence", "verification")


def run_pipeline(tmp_path: Path, llm: FakeOpenAI, *extra: str) -> dict[str, Path]:
    src = write_input(tmp_path / "mixed.jsonl")
    out = tmp_path / "out"
    with FakeSerper() as serper:
        cli("run", str(src), "--out", str(out), *endpoints(llm, serper, tmp_path), *extra)
    return {stage: out / f"{stage}_mixed.jsonl" for stage in STAGES}


def written_by_dataformats(path: Path) -> str:
    """The file as dataformats.veriscore reads it and writes it again, byte for byte."""
    _, docs, warnings = parse_file(
        path.read_text(encoding="utf-8"), file=path.name, fmt="veriscore"
    )
    assert warnings == []
    return "".join(
        json.dumps(
            veriscore.write(d, system=veriscore.NAME, verifier=f"{veriscore.NAME}-verifier"),
            ensure_ascii=False,
        )
        + "\n"
        for d in docs
    )


@pytest.mark.slow
@pytest.mark.parametrize("flaky", [False, True], ids=["healthy", "failures"])
def test_pipeline_files_are_dataformats_veriscore_and_round_trip_through_the_platform(
    db: None, tmp_path: Path, flaky: bool
) -> None:
    if flaky:  # the same requests fail on every run (faults drawn from the request body)
        with FakeOpenAI(fault_rate=0.15, seed=5, faults=("500",)) as llm:
            files = run_pipeline(tmp_path, llm, "--max-retries", "0", "--allow-failures")
            assert llm.faults_served() > 0
    else:
        with FakeOpenAI() as llm:
            files = run_pipeline(tmp_path, llm)

    claims = read(files["claims"])
    verification = read(files["verification"])
    assert any(r["abstained"] for r in claims) and not all(r["abstained"] for r in claims)
    if flaky:  # the failure semantics survive the shared writer
        assert any(r["incomplete"] for r in claims)
        assert any(s is None for r in claims for s in r.get("claim_list", []))
        assert any(
            v["verification_result"] == "error"  # a failed verification call, as before
            for r in verification
            for v in r.get("claim_verification_result", [])
        )
    else:
        assert not any(r["incomplete"] for r in claims)

    for stage, path in files.items():
        text = path.read_text(encoding="utf-8")
        assert written_by_dataformats(path) == text, stage

        project = Project.objects.create(name=f"{stage}-{flaky}")
        import_file(project=project, text=text, file=path.name, fmt="veriscore", system="vs")
        assert formats.veriscore_records(project, system="vs") == read(path), stage
