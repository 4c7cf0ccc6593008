"""Prices: cached input, the Batch discount, the operator's table, estimate beside actual."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.estimate import cacheable_prefix
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.llm import cost_usd, price

from .conftest import FIXTURES


def test_cached_input_and_the_batch_discount_are_priced() -> None:
    # gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    assert cost_usd("gpt-4o-mini", 1_000_000, 0) == pytest.approx(0.15)
    assert cost_usd("gpt-4o-mini", 1_000_000, 0, cached_tokens=1_000_000) == pytest.approx(0.075)
    both = cost_usd("gpt-4o-mini", 2_000_000, 1_000_000, cached_tokens=1_000_000, batch=True)
    assert both == pytest.approx((0.15 + 0.075 + 0.60) / 2)


def test_the_operator_table_replaces_and_adds_prices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"gpt-4o-mini": [1, 2, 0.5], "my-local-model": [0.1, 0.2]}))
    monkeypatch.setenv("PIPELINE_PRICES", str(table))
    assert price("gpt-4o-mini-2024-07-18") == (1.0, 2.0, 0.5)
    assert price("my-local-model") == (0.1, 0.2, 0.1)  # no cached price: input price
    bad = tmp_path / "bad.json"
    bad.write_text('{"m": "cheap"}')
    monkeypatch.setenv("PIPELINE_PRICES", str(bad))
    with pytest.raises(ValueError, match="bad.json"):
        price("m")


def test_the_cacheable_prefix_counts_from_1024_tokens_in_steps_of_128() -> None:
    static = "word " * 1500
    a = [{"role": "system", "content": static}, {"role": "user", "content": "claim one"}]
    b = [{"role": "system", "content": static}, {"role": "user", "content": "claim two"}]
    shared = cacheable_prefix(a, b)
    assert shared >= 1024 and shared % 128 == 0
    short = [{"role": "user", "content": "word " * 100 + "x"}]
    assert cacheable_prefix(short, [{"role": "user", "content": "word " * 100 + "y"}]) == 0


def test_a_run_prints_estimate_and_actual_cost_with_cached_input(
    fake_llm: FakeOpenAI,
    fake_serper: FakeSerper,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = tmp_path / "in.jsonl"
    lines = (FIXTURES / "pipeline" / "factscore_bios.jsonl").read_text("utf-8").splitlines(True)
    src.write_text("".join(lines[:3]), "utf-8")
    argv = [
        "run", str(src), "--base-url", fake_llm.base_url, "--api-key", "k",
        "--serper-key", "k", "--serper-url", fake_serper.url, "--no-progress",
        "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cost:"))
    found = re.match(r"cost: estimate \$([\d.]+), actual \$([\d.]+) \((\d+) of (\d+) input", line)
    assert found, line
    estimate, actual, cached, prompt = (float(x) for x in found.groups())
    assert estimate > 0 and actual > 0
    assert 0 < cached < prompt  # the verification prompts' shared few-shot prefix
