"""The CLI end to end, as a subprocess, against the fake servers over HTTP."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.__main__ import main
from pipeline.cache import Cache, make_key
from pipeline.fakes import FakeOpenAI, FakeSerper

from .conftest import FIXTURES, REPO

DANUBE = "The Danube rises in the Black Forest in Germany. It flows into the Black Sea."


def write_input(path: Path, n_bios: int = 3) -> Path:
    bios = (FIXTURES / "pipeline" / "factscore_bios.jsonl").read_text().splitlines()
    sample = json.loads((FIXTURES / "pipeline" / "data_sample.jsonl").read_text())
    lines = bios[:n_bios] + [
        json.dumps({k: sample[k] for k in ("question", "response", "model", "prompt_source")}),
        json.dumps(
            {
                "response": "Sorry, I can't do that.",
                "model": "ChatGPT",
                "prompt_source": "Biography",
            }
        ),
        json.dumps(
            {
                "response": DANUBE,
                "model": "ChatGPT",
                "prompt_source": "Wiki",
            }
        ),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", *args, "--no-progress", "--backoff", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung run, far from a loaded machine's time
        env={**os.environ, **(env or {})},
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def endpoints(llm: FakeOpenAI, serper: FakeSerper, tmp_path: Path) -> list[str]:
    return [
        "--base-url",
        llm.base_url,
        "--api-key",
        "k",
        "--model",
        "gpt-4o-mini",
        "--serper-key",
        "k",
        "--serper-url",
        serper.url,
        "--cache",
        str(tmp_path / "cache.sqlite"),
    ]


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def verdicts(path: Path) -> list[Any]:
    return [(r.get("all_claims"), r.get("claim_verification_result")) for r in read(path)]


@pytest.mark.slow
def test_run_writes_veriscore_files_and_a_scores_table(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl")
    out = tmp_path / "out"
    proc = cli("run", str(src), "--out", str(out), *endpoints(fake_llm, fake_serper, tmp_path))
    assert "VERIScore" in proc.stdout and "Kendall" in proc.stdout

    claims = read(out / "claims_mixed.jsonl")
    assert len(claims) == 6
    live = claims[0]
    assert {
        "question",
        "response",
        "model",
        "prompt_source",
        "claim_list",
        "all_claims",
        "abstained",
    } <= live.keys()
    assert len(live["claim_list"]) == len(live["pipeline"]["sentences"])
    assert claims[4]["abstained"] is True and "claim_list" not in claims[4]
    evidence = read(out / "evidence_mixed.jsonl")
    assert set(evidence[0]["claim_search_results"]) == set(live["all_claims"])
    first_hits = next(iter(evidence[0]["claim_search_results"].values()))
    assert set(first_hits[0]) == {"title", "snippet", "link"}
    verification = read(out / "verification_mixed.jsonl")
    results = verification[0]["claim_verification_result"]
    assert [r["claim"] for r in results] == live["all_claims"]
    assert {r["verification_result"] for r in results} <= {"supported", "unsupported"}
    assert results[0]["search_results"].startswith("Search result 1\nTitle: ")
    scores = json.loads((out / "scores_mixed.json").read_text())
    assert {r["domain"] for r in scores["rows"]} == {"Biography", "ShareGPT", "Wiki"}

    # the same run again: everything from the cache, not one call
    calls = (len(fake_llm.requests), len(fake_serper.requests))
    proc = cli(
        "run",
        str(src),
        "--out",
        str(tmp_path / "again"),
        *endpoints(fake_llm, fake_serper, tmp_path),
    )
    assert (len(fake_llm.requests), len(fake_serper.requests)) == calls
    assert "LLM calls 0 " in proc.stdout and "searches 0 " in proc.stdout
    assert verdicts(tmp_path / "again" / "verification_mixed.jsonl") == verdicts(
        out / "verification_mixed.jsonl"
    )

    # offline, with no endpoint at all
    offline = ["--cache", str(tmp_path / "cache.sqlite"), "--model", "gpt-4o-mini", "--offline"]
    cli("run", str(src), "--out", str(tmp_path / "offline"), *offline)
    assert verdicts(tmp_path / "offline" / "verification_mixed.jsonl") == verdicts(
        out / "verification_mixed.jsonl"
    )

    # a cache miss offline fails clearly
    proc = cli(
        "run",
        str(src),
        "--out",
        str(tmp_path / "x"),
        *offline,
        "--label-mode",
        "ternary",
        check=False,
    )
    assert proc.returncode == 2
    assert "offline: no cached chat answer" in proc.stderr
    assert (len(fake_llm.requests), len(fake_serper.requests)) == calls


@pytest.mark.slow
def test_stage_commands_chain_into_the_same_result(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=1)
    ep = endpoints(fake_llm, fake_serper, tmp_path)
    out = tmp_path / "stages"
    cli("extract", str(src), "--out", str(out), *ep)
    cli("retrieve", str(out / "claims_mixed.jsonl"), "--out", str(out), *ep)
    cli("verify", str(out / "evidence_mixed.jsonl"), "--out", str(out), *ep)
    proc = cli("score", str(out / "verification_mixed.jsonl"), "--out", str(out), "--fixed-k", "5")
    assert "fixed K=5" in proc.stdout
    cli("run", str(src), "--out", str(tmp_path / "whole"), *ep)
    staged = [
        r["claim_verification_result"]
        for r in read(out / "verification_mixed.jsonl")
        if not r["abstained"]
    ]
    whole = [
        r["claim_verification_result"]
        for r in read(tmp_path / "whole" / "verification_mixed.jsonl")
        if not r["abstained"]
    ]
    assert staged == whole


def test_score_reads_veriscore_own_output(tmp_path: Path) -> None:
    proc = cli("score", str(FIXTURES / "pipeline" / "data_sample.jsonl"), "--out", str(tmp_path))
    assert "ShareGPT" in proc.stdout


def test_estimate_prints_cost_and_calls_nothing(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl")
    proc = cli("run", str(src), "--estimate", *endpoints(fake_llm, fake_serper, tmp_path))
    assert (
        "extraction" in proc.stdout and "verification" in proc.stdout and "total ~ $" in proc.stdout
    )
    assert fake_llm.requests == [] and fake_serper.requests == []


@pytest.mark.slow
def test_endpoints_come_from_environment_variables(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=0)
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "k",
        "PIPELINE_MODEL": "env-model",
        "SERPER_API_KEY": "k",
    }
    cli(
        "run",
        str(src),
        "--out",
        str(tmp_path / "o"),
        "--serper-url",
        fake_serper.url,
        "--cache",
        str(tmp_path / "c.sqlite"),
        env=env,
    )
    assert {r["body"]["model"] for r in fake_llm.requests} == {"env-model"}


def stored_keys(cache_path: Path) -> set[str]:
    cache = Cache(cache_path)
    try:
        return {make_key("chat", r) for r in cache.requests("chat")} | {
            make_key("search", r) for r in cache.requests("search")
        }
    finally:
        cache.close()


def stored_rows(cache_path: Path) -> int:
    """Rows the running process has stored so far. Read-only, and 0 while the file is
    still being set up: opening a Cache here would race the writer's schema and WAL set-up."""
    try:
        db = sqlite3.connect(f"file:{cache_path}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


class HeldOpenAI(FakeOpenAI):
    """Answers the first `answered` chat calls, then holds every other one until the test
    lets them go: the run cannot finish before the test has killed it."""

    def __init__(self, answered: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answered = answered
        self.go = threading.Event()

    def _respond(self, path: str, *args: Any) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            n = sum(1 for r in self.requests if r["path"] == path)
        if n > self.answered:
            self.go.wait(300)  # a guard against a hung test, not a timing
        return super()._respond(path, *args)


@pytest.mark.slow
def test_a_killed_run_repeats_no_stored_call(tmp_path: Path) -> None:
    src = tmp_path / "bios.jsonl"
    src.write_text(
        "\n".join((FIXTURES / "pipeline" / "factscore_bios.jsonl").read_text().splitlines()[:10])
    )
    cache_path = tmp_path / "cache.sqlite"
    with HeldOpenAI(40, latency=0.05) as llm, FakeSerper(latency=0.05) as serper:
        args = [
            "run",
            str(src),
            "--out",
            str(tmp_path / "out"),
            "--concurrency",
            "2",
            *endpoints(llm, serper, tmp_path),
            "--no-progress",
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", *args],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # Wait for answers to be stored, by watching the cache, then kill mid-run (the
            # provider holds the calls after its 40th answer meanwhile).
            deadline = time.monotonic() + 300  # a guard against a hung test
            while not (cache_path.exists() and stored_rows(cache_path) >= 25):
                assert proc.poll() is None, "the run ended before it could be killed"
                assert time.monotonic() < deadline
                time.sleep(0.02)
        finally:
            proc.kill()
            proc.wait()
            llm.go.set()
        stored = stored_keys(cache_path)
        assert len(stored) >= 25
        assert not (tmp_path / "out" / "verification_bios.jsonl").exists()
        seen_llm, seen_serper = len(llm.requests), len(serper.requests)

        cli(*args[:-1])
        repeated_chat = [
            r
            for r in llm.requests[seen_llm:]
            if make_key(
                "chat",
                {k: r["body"][k] for k in ("model", "messages", "temperature", "max_tokens")},
            )
            in stored
        ]
        repeated_search = [
            r
            for r in serper.requests[seen_serper:]
            if make_key(
                "search", {"engine": "serper", "query": r["body"]["q"], "n": r["body"]["num"]}
            )
            in stored
        ]
        assert repeated_chat == [] and repeated_search == []
        assert len(llm.requests) > seen_llm  # the rerun did the rest
    done = [
        json.loads(line)
        for line in (tmp_path / "out" / "verification_bios.jsonl").read_text().splitlines()
    ]
    assert len(done) == 10 and all("claim_verification_result" in r for r in done)


@pytest.mark.slow
def test_an_outage_fails_loudly_and_is_never_a_score(
    fake_serper: FakeSerper, tmp_path: Path
) -> None:
    down = FakeOpenAI().start()
    down.stop()  # nothing listens on its port any more
    src = write_input(tmp_path / "mixed.jsonl", n_bios=1)
    out = tmp_path / "out"
    args = ["run", str(src), "--out", str(out), *endpoints(down, fake_serper, tmp_path)]
    proc = cli(*args, "--max-retries", "1", check=False)
    assert proc.returncode == 3
    assert "FAILED:" in proc.stderr and "left out of the scores" in proc.stderr
    claims = read(out / "claims_mixed.jsonl")
    live = [c for c in claims if not c["abstained"]]
    assert live and all(c["incomplete"] for c in live)
    assert all(s is None for c in live for s in c["claim_list"])  # never "No verifiable claim."
    scores = json.loads((out / "scores_mixed.json").read_text())
    assert scores["incomplete"] == len(live)
    assert all(r["responses"] == 0 for r in scores["rows"])
    # nothing was measured: null, never 0.0
    assert all(r["veriscore"] is None and r["precision"] is None for r in scores["rows"])
    assert all(not s["incomplete"] for s in scores["responses"] if s["abstained"])

    tolerated = cli(*args, "--max-retries", "0", "--allow-failures", check=False)
    assert tolerated.returncode == 0 and "FAILED:" in tolerated.stderr


@pytest.mark.slow
def test_a_partial_failure_marks_only_the_responses_it_touched(
    fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=3)
    out = tmp_path / "out"
    with FakeOpenAI(fault_rate=0.15, seed=5, faults=("500",)) as flaky:
        ep = endpoints(flaky, fake_serper, tmp_path)
        proc = cli("run", str(src), "--out", str(out), *ep, "--max-retries", "0", check=False)
        assert flaky.faults_served() > 0
    assert proc.returncode == 3
    results = [r["pipeline"] for r in read(out / "verification_mixed.jsonl")]
    failed = [r for r in results if r["errors"]]
    assert failed and len(failed) < len(results)
    scores = json.loads((out / "scores_mixed.json").read_text())
    assert scores["incomplete"] == len(failed)
    # a rerun retries only what failed and ends complete
    with FakeOpenAI() as healthy:
        ep = endpoints(healthy, fake_serper, tmp_path)
        proc = cli("run", str(src), "--out", str(out), *ep)
        assert 0 < len(healthy.requests) < sum(len(r["sentences"]) for r in results)
    assert json.loads((out / "scores_mixed.json").read_text())["incomplete"] == 0


def test_a_verifier_whose_answers_cannot_be_parsed_fails_the_run(
    fake_llm: FakeOpenAI,
    fake_serper: FakeSerper,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No ###label###: every verdict is unparsed. That was VERIScore 0.0 and exit 0.
    fake_llm.judge = lambda system, prompt: "Having read the results, the claim is supported."  # type: ignore[method-assign]
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"response": DANUBE, "model": "M", "prompt_source": "Wiki"}) + "\n")
    out = tmp_path / "out"
    argv = ["run", str(src), "--out", str(out), *endpoints(fake_llm, fake_serper, tmp_path)]
    assert main([*argv, "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "FAILED: none of the 2 verifier answer(s) could be parsed" in err
    scores = json.loads((out / "scores_d.json").read_text())
    assert scores["k"] == {"Wiki": None} and scores["incomplete"] == 1
    [row] = scores["rows"]
    assert row["veriscore"] is None and row["precision"] is None and row["responses"] == 0
    # scoring the file again says the same
    assert main(["score", str(out / "verification_d.jsonl"), "--out", str(out)]) == 3
