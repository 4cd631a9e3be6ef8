"""Choosing steps to judge: the stratified sample's sizes against the textbook formula, a
nested sample that grows instead of starting over, and the index choosing, rendering and
estimating exactly what reading every file does."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import tsq
from fake_anthropic import API_KEY, FakeAnthropic
from scipy.stats import norm

import analysis
from analysis.index import (
    Choice,
    IndexReader,
    LoadedSteps,
    candidate_steps,
    direct_plan,
    in_scope,
    indexed_plan,
    step_scores,
    stratified_sample,
    trends,
    update_index,
)
from analysis.judge import default_spec, estimate_run
from analysis.models import STEP_KEYS

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "claude-code"
ALIGNMENT = analysis.sample_data_dir() / "alignment" / "transcripts"
MODEL = "claude-judge-4-5"


def _textbook(stratum: int, half_width: float) -> int:
    """Cochran: n0 = z² p(1-p) / h² at the worst p = 1/2, corrected for a finite stratum."""
    z = norm.ppf(0.975)
    n0 = z * z * 0.25 / half_width**2
    return min(stratum, math.ceil(n0 / (1 + (n0 - 1) / stratum)))


def _steps(sizes: dict[str, int], extra_tool: dict[str, str] | None = None) -> pl.DataFrame:
    """Steps of one session each calling one tool, ``sizes[tool]`` of them; a step of tool
    ``t`` also calls ``extra_tool[t]`` when given (a step in two strata)."""
    rows = []
    for tool, size in sizes.items():
        for number in range(size):
            also = (extra_tool or {}).get(tool) if number % 3 == 0 else None
            tools = [tool, also] if also else [tool]
            rows.append(
                {
                    "session_id": f"s-{tool}",
                    "turn_index": number,
                    "step_index": 0,
                    "parent_call_id": None,
                    "tools": tools,
                    "model": "m",
                    "version": f"2.1.{number % 4}",
                    "project": "p",
                    "week": "2026-01-05",
                }
            )
    return pl.DataFrame(rows)


@pytest.mark.parametrize("half_width", [0.05, 0.1, 0.2])
def test_each_stratum_gets_the_textbook_sample_size(half_width):
    sizes = {"Bash": 5000, "Read": 900, "Grep": 120, "Glob": 7}
    steps = _steps(sizes)
    sample = stratified_sample(steps, half_width, "tool")
    chosen = steps[sample.rows]
    for stratum in sample.strata:
        expected = _textbook(sizes[stratum.name], half_width)
        assert stratum.needed == expected
        assert stratum.steps == sizes[stratum.name]
        assert chosen["tools"].list.contains(stratum.name).sum() == stratum.taken == expected
    whole = stratified_sample(steps, half_width)
    assert [s.name for s in whole.strata] == ["all"]
    assert len(whole.rows) == _textbook(steps.height, half_width)


def test_a_smaller_half_width_adds_steps_to_the_sample():
    steps = _steps({"Bash": 3000, "Read": 400, "Grep": 60}, {"Bash": "Read", "Read": "Grep"})
    for by in ("tool", "version", None):
        earlier: set[int] = set()
        for half_width in (0.3, 0.2, 0.1, 0.05):
            sample = stratified_sample(steps, half_width, by)
            rows = set(sample.rows)
            assert earlier <= rows
            assert all(s.taken >= s.needed for s in sample.strata)  # every stratum has its n
            earlier = rows
    again = stratified_sample(steps, 0.1, "tool")
    assert again.rows == stratified_sample(steps, 0.1, "tool").rows  # the same on every run
    assert stratified_sample(steps, 0.1, "tool", seed=1).rows != again.rows


def _tsq(*args: str) -> subprocess.CompletedProcess[str]:
    return tsq(*args, env={"ANTHROPIC_API_KEY": API_KEY})


def _keys(path: Path) -> set[tuple[object, ...]]:
    return {
        tuple(line[key] for key in STEP_KEYS)
        for line in map(json.loads, path.read_text().splitlines())
    }


@pytest.mark.slow
def test_a_later_run_with_a_smaller_half_width_asks_only_the_new_steps(tmp_path):
    out, index = tmp_path / "judgments.jsonl", tmp_path / "index.duckdb"
    with FakeAnthropic() as fake:

        def judge(half_width: str, run: str, *extra: str) -> subprocess.CompletedProcess[str]:
            return _tsq(
                "judge", str(ALIGNMENT), "--model", MODEL, "--base-url", fake.url,
                "--sample-to", half_width, "--strata", "tool", "--index", str(index),
                "--cache-dir", str(tmp_path / run), *extra,
            )  # fmt: skip

        dry = judge("0.3", "dry", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "sample to ±0.3 (95%) by tool: 32 of 60 steps in 5 strata" in dry.stdout
        assert dry.stdout.count("32 steps x 3 votes = 96 requests (from ") == 1
        assert "x 3 votes = 96 requests" in dry.stdout
        assert fake.requests_seen == 0

        first = judge("0.3", "first", "--out", str(out))
        assert first.returncode == 0, first.stderr
        assert len(fake.script.messages) == 3 * 32
        lines = first.stdout.splitlines()
        said = next(n for n, line in enumerate(lines) if line.startswith("estimated cost"))
        asked = next(n for n, line in enumerate(lines) if line.startswith("judge: "))
        assert said < asked  # the size and cost come before the run's own summary
        earlier = _keys(out)
        assert len(earlier) == 32

        second = judge("0.2", "second", "--out", str(out))  # a fresh vote cache: no help there
        assert second.returncode == 0, second.stderr
        assert "44 of 60 steps in 5 strata; 32 already judged" in second.stdout
        assert "12 to ask" in second.stdout
        assert len(fake.script.messages) == 3 * (32 + 12)
        now = _keys(out)
        assert earlier < now
        assert len(now) == 44

        again = judge("0.2", "third", "--out", str(out))
        assert again.returncode == 0, again.stderr
        assert "Nothing to ask" in again.stdout
        assert len(fake.script.messages) == 3 * 44

    update_index([ALIGNMENT, out], index)
    with IndexReader(index) as reader:
        steps = step_scores(reader)
    table = {row["tool"]: row for row in trends(steps, "tool").iter_rows(named=True)}
    assert table["WebSearch"]["sampled"]
    assert table["WebSearch"]["judged"] == 12
    assert table["Bash"]["judged"] == 8
    assert table["Bash"]["steps"] == 10
    shown = _tsq("trends", str(ALIGNMENT), str(out), "--index", str(index), "--by", "tool")
    assert shown.returncode == 0, shown.stderr
    assert "sampled: 12 of 20 steps" in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strata", "tool"], "--strata is for --sample-to."),
        (["--sample-to", "0.1", "--unit", "turn"], "--sample-to samples steps that called"),
        (["--sample-to", "0.7"], "0.7"),
        (["--no-index", "--index", "x.duckdb"], "give --index or --no-index, not both."),
    ],
)
def test_sampling_options_that_cannot_be_used_are_one_sentence(args, message, tmp_path):
    done = _tsq("judge", str(ALIGNMENT), "--model", MODEL, "--dry-run", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


CHOICES = [
    Choice(),
    Choice(subagents=True),
    Choice(selection="first"),
    Choice(selection="sample:3", subagents=True, seed=4),
    Choice(sample_to=0.1, strata="tool"),
    Choice(sample_to=0.2, strata="week", subagents=True),
    Choice(sample_to=0.15, strata="version", seed=2),
    Choice(sample_to=0.25),
]


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory):
    index = tmp_path_factory.mktemp("index") / "index.duckdb"
    update_index([CORPUS], index)
    return index


@pytest.fixture(scope="module")
def corpus_load():
    return analysis.load([CORPUS])


@pytest.mark.parametrize("choice", CHOICES, ids=str)
def test_the_index_chooses_renders_and_estimates_as_reading_every_file(
    choice, corpus_index, corpus_load
):
    spec = default_spec().with_changes(model="claude-sonnet-4-5")
    direct = direct_plan(corpus_load, [CORPUS], spec, ("full",), choice, None)
    with IndexReader(corpus_index) as reader:
        dry = indexed_plan(reader, [CORPUS], spec, ("full",), choice, None, render=False)
        full = indexed_plan(reader, [CORPUS], spec, ("full",), choice, None)
    assert direct.rendered
    assert full.rendered
    assert [u.model_dump() for u in full.rendered] == [u.model_dump() for u in direct.rendered]
    assert dry.rendered is None or choice.subagents  # the default rendering reads no file
    assert dry.estimate == full.estimate == direct.estimate
    assert direct.estimate == estimate_run(
        direct.rendered, 3, "claude-sonnet-4-5", spec.system_text()
    )
    assert (dry.sample is None) == (choice.sample_to is None)
    if direct.sample is not None:
        assert dry.sample == direct.sample
        assert dry.population == direct.population


def test_another_rendering_through_the_index_is_rendered_from_the_chosen_files(
    corpus_index, corpus_load
):
    spec = default_spec().with_changes(model="claude-sonnet-4-5", step_chars=4000)
    choice = Choice(sample_to=0.2, strata="tool")
    conditions = ("bare", "catalog_no_call", "full")
    direct = direct_plan(corpus_load, [CORPUS], spec, conditions, choice, None)
    with IndexReader(corpus_index) as reader:
        indexed = indexed_plan(reader, [CORPUS], spec, conditions, choice, None, render=False)
    assert indexed.rendered is not None
    assert [u.model_dump() for u in indexed.rendered] == [u.model_dump() for u in direct.rendered]
    assert indexed.estimate == direct.estimate


def test_the_direct_path_reads_the_steps_as_the_index_does(corpus_index, corpus_load):
    tables = LoadedSteps(corpus_load, [CORPUS])
    with IndexReader(corpus_index) as reader:
        in_scope(reader, [CORPUS])
        indexed = candidate_steps(reader, "all", True, 0)
    loaded = candidate_steps(tables, "all", True, 0)
    columns = [*STEP_KEYS, "tools", "model", "version", "project", "week", "calls", "errors"]
    assert loaded.select(columns).equals(indexed.select(columns))
