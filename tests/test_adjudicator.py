"""The AI adjudicator, with the real SDK against the local fake Anthropic server."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import tsq
from fake_anthropic import API_KEY, FakeAnthropic

from analysis.study import LabelStore, comparisons, load_study, reconcile, study_tables

STUDY = Path(__file__).resolve().parents[1] / "sample_data" / "council_vs_human"
TRANSCRIBED = "cvh-059"  # has a transcript with 2 repeated calls


@pytest.fixture
def small_study(tmp_path: Path) -> Path:
    """The first 30 sessions of the bundled study, with no decisions made yet."""
    folder = tmp_path / "study"
    folder.mkdir()
    with (STUDY / "labels.csv").open() as handle:
        rows = list(csv.reader(handle))
    keep = {f"cvh-{n:03d}" for n in range(1, 31)} | {TRANSCRIBED}
    with (folder / "labels.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows([rows[0], *(r for r in rows[1:] if r[0] in keep)])
    shutil.copy(STUDY / "items.csv", folder / "items.csv")
    shutil.copytree(STUDY / "transcripts", folder / "transcripts")
    return folder


def adjudicate(fake: FakeAnthropic, study: Path, db: Path, *extra: str, key: str = API_KEY):
    return tsq(
        *("adjudicate", str(study)),
        *("--model", "Claude Judge 4.5", "--base-url", fake.url, "--db", str(db), *extra),
        env={"ANTHROPIC_API_KEY": key},
    )


@pytest.mark.slow
def test_every_open_disagreement_is_decided_by_the_rule_and_recorded(small_study, tmp_path):
    db = tmp_path / "decisions.sqlite"
    study = load_study(small_study)
    expected = reconcile(comparisons(study), []).filter(~pl.col("agree"))
    with FakeAnthropic() as fake:
        fake.script.faults = ["overloaded", "rate_limited", "no_verdict"]
        run = adjudicate(fake, small_study, db)
        assert run.returncode == 0, run.stderr
        prompts = [m["messages"][0]["content"] for m in fake.script.messages]
        again = adjudicate(fake, small_study, db)
        assert again.returncode == 0
        assert len(fake.script.messages) == len(prompts)  # nothing left to ask
    decisions = LabelStore(db).decisions()
    assert len(decisions) == expected.height
    assert {d.adjudicator for d in decisions} == {"claude-judge-4-5"}
    assert {d.adjudicator_kind for d in decisions} == {"ai"}
    # one request each, plus the 529 and 429 retried and the answer with no decision re-asked
    assert len(prompts) == expected.height + 3
    assert f"{expected.height} decided" in run.stdout

    tables = study_tables(study, LabelStore(db), resamples=0)
    by_ai = tables.reconciled.filter(pl.col("source") == "ai")
    assert by_ai.height == expected.height
    proposed = by_ai.filter(pl.col("proposal_side").is_not_null())
    assert proposed["followed_rule"].all()  # the fake follows the rule it is shown
    for row in by_ai.iter_rows(named=True):
        assert row["calibrated"] == row[row["side"]]

    for row in expected.iter_rows(named=True):
        prompt = next(
            p
            for p in prompts
            if f"## Session {row['item_id']}" in p and f"## Field: {row['field']} " in p
        )
        assert f"Human label: {row['human']}" in prompt
        assert f"Council label: {row['council']}" in prompt
    transcribed = next(
        p for p in prompts if f"## Session {TRANSCRIBED}" in p and "tool_policy" in p
    )
    assert "Redundant calls: 2 (from the transcript)" in transcribed
    assert "call Bash({'command': 'tail -n 50 /var/log/export.log'})" in transcribed


@pytest.mark.slow
def test_departures_from_the_rule_are_visible(small_study, tmp_path):
    db = tmp_path / "decisions.sqlite"
    with FakeAnthropic() as fake:
        fake.script.contrary_field = "efficiency_bucket"
        assert adjudicate(fake, small_study, db).returncode == 0
    tables = study_tables(load_study(small_study), LabelStore(db), resamples=0)
    sides = {row["field"]: row for row in tables.ai_sides.iter_rows(named=True)}
    efficiency = sides["efficiency_bucket"]
    assert efficiency["followed_rule"] == 0
    assert efficiency["departed_from_rule"] == efficiency["decisions"]
    assert efficiency["chose_human"] == efficiency["decisions"]  # the rule says council
    assert sides["task_completed"]["followed_share"] == 1.0


@pytest.mark.slow
def test_failures_leave_disagreements_open_and_say_why(small_study, tmp_path):
    db = tmp_path / "decisions.sqlite"
    with FakeAnthropic() as fake:
        bad_key = adjudicate(fake, small_study, db, key="wrong")
        assert bad_key.returncode == 1
        assert (
            bad_key.stderr.strip()
            == "The API key was rejected (HTTP 401); check ANTHROPIC_API_KEY."
        )
        fake.script.faults = ["no_verdict"] * 3
        failed = adjudicate(fake, small_study, db, "--limit", "1")
        assert failed.returncode == 1
        assert "left open (no valid decision in 3 attempts)" in failed.stderr
        assert "Traceback" not in failed.stderr
        assert LabelStore(db).decisions() == []
        retried = adjudicate(fake, small_study, db, "--limit", "2")
    assert retried.returncode == 0
    assert len(LabelStore(db).decisions()) == 2
