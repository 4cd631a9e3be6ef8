"""A trained scorer's judgments where people read scores: never taken for an LLM judge's votes
(no split vote), always named as a trained scorer with its test agreement beside its name —
by tsq trends, tsq report and tsq lint through the index, and by the workbench, whose Turn
page shows the features that moved a step's probability, the same probability tsq score
wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import open_app, tsq, use_folder

import analysis
from analysis.findings import votes_in_words
from analysis.models import Judgment
from analysis.views import step_table

SCORER = analysis.sample_data_dir() / "scorer"
TRANSCRIPTS = analysis.sample_data_dir() / "alignment" / "transcripts"


def _agreement_words(card: dict[str, Any]) -> str:
    """The card's test agreement as every caller says it, computed here from the card."""
    spec = card["test"]["spec"]
    low, high = spec["agreement_ci"]
    return (
        f"agreement with people {spec['agreement']:.1%} [{low:.1%}, {high:.1%}] on "
        f"{spec['n']} test steps"
    )


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Judgment]]:
    """The alignment sample's transcripts (no LLM judgment among them) scored by the bundled
    scorer into the user's index, the one the workbench reads: (folder, the rows tsq score
    --out wrote)."""
    base = tmp_path_factory.mktemp("scored")
    folder = base / "transcripts"
    shutil.copytree(TRANSCRIPTS, folder)
    out = base / "scores.jsonl"
    done = tsq("score", str(folder), "--scorer", str(SCORER), "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = [Judgment.model_validate_json(line) for line in out.read_text().splitlines()]
    return folder, rows


def test_a_scorers_probability_is_never_a_split_vote() -> None:
    session = analysis.load([TRANSCRIPTS]).sessions[0]
    step = next(s for t in session.turns for s in analysis.turn_steps(t) if s.calls_tools)
    judgment = Judgment(
        session_id=session.session_id,
        turn_index=step.turn.index,
        step_index=step.index,
        score=0.7,
        votes=[],
        n_requested=0,
        n_valid=0,
        n_discarded=0,
        model="step-scorer",
        judge_id="step-scorer#0123456789ab",
        spec_name="step-scorer",
        condition="full",
        catalog_size=12,
        call_rendered=True,
        context_chars=0,
        rater="scorer",
    )
    assert judgment.verdict == "correct"  # 0.7 >= 0.5: its label, not "split"
    findings = analysis.collect_findings([session], [judgment])
    assert not [f for f in findings if f.code == "SPLIT_VOTE"]
    row = step_table(session, [judgment], findings).row(0, named=True)
    assert (row["verdict_kind"], row["votes_label"]) == ("correct", "scorer: probability 0.7")
    assert "trained step scorer step-scorer#0123456789ab" in votes_in_words(judgment)
    assert "0.70" in votes_in_words(judgment)


def test_trends_report_and_lint_name_the_scorer_with_its_test_agreement(
    scored: tuple[Path, list[Judgment]], tmp_path: Path
) -> None:
    folder, rows = scored
    card = json.loads((SCORER / "card.json").read_text())
    named = f"{card['scorer_id']} (a trained step scorer, not an LLM judge: "
    named += _agreement_words(card) + ")"

    trends = tsq("trends", str(folder))
    assert trends.returncode == 0, trends.stderr
    assert trends.stdout.startswith(f"judge: {named}; scores are its probabilities; ")

    lint = tsq("lint", str(folder))
    assert lint.returncode == 0, lint.stderr
    assert f"judge {named}: its scores are probabilities, not votes" in lint.stdout
    assert "SPLIT_VOTE" not in lint.stdout

    report = tmp_path / "report.html"
    done = tsq("report", str(folder), "--out", str(report))
    assert done.returncode == 0, done.stderr
    assert f"{len(rows)} judgments" in done.stdout
    import html

    text = html.unescape(report.read_text())
    assert f"A trained step scorer scored {len(rows)} decisions (steps)" in text
    assert f"Scores are by {named}" in text
    assert "the judges agreed on every one" not in text


def test_the_turn_page_shows_what_moved_the_probability_tsq_score_wrote(
    scored: tuple[Path, list[Judgment]],
) -> None:
    folder, rows = scored
    lowest = min(rows, key=lambda j: j.score or 0.0)  # a step it thinks was wrong
    assert lowest.score is not None
    assert lowest.score < 0.5
    at = use_folder(open_app(), folder)
    at.query_params["session"] = lowest.session_id
    at.query_params["turn"] = str(lowest.turn_index)
    at.query_params["step"] = str(lowest.step_index)
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    texts = [t.value for t in at.text]
    assert any(
        f"gives a probability of {lowest.score:.2f} that this choice was correct (incorrect)" in t
        for t in texts
    ), texts
    captions = [c.value.replace("\\", "") for c in at.caption]  # markdown escapes removed
    assert any(
        c.startswith(f"Probability {lowest.score:.3f} of a correct choice") for c in captions
    )
    card = json.loads((SCORER / "card.json").read_text())
    assert any(_agreement_words(card) in c for c in captions), captions
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert any("casts no votes" in c for c in captions)


def test_the_pages_explanation_gives_every_step_the_probability_tsq_score_wrote(
    scored: tuple[Path, list[Judgment]],
) -> None:
    from analysis.scorer import FEATURE_SET_VERSION, explain_step, load_scorer

    folder, rows = scored
    scorer, _ = load_scorer(SCORER, FEATURE_SET_VERSION)
    sessions = {s.session_id: s for s in analysis.load([folder]).sessions}
    for row in rows:
        assert row.step_index is not None
        explained = explain_step(
            scorer, sessions[row.session_id], row.turn_index, row.step_index, row.parent_call_id
        )
        assert explained is not None
        assert explained.probability == pytest.approx(row.score, abs=1e-12)
        assert explained.contributions  # the tokens that moved it


def test_the_explanation_adds_up_to_the_steps_logit(scored: tuple[Path, list[Judgment]]) -> None:
    from analysis.scorer import FEATURE_SET_VERSION, explain_step, load_scorer

    folder, rows = scored
    scorer, _ = load_scorer(SCORER, FEATURE_SET_VERSION)
    session = analysis.load([folder]).sessions[0]
    row = next(r for r in rows if r.session_id == session.session_id)
    assert row.step_index is not None
    explained = explain_step(scorer, session, row.turn_index, row.step_index, top=3)
    assert explained is not None
    assert len(explained.contributions) == 3
    total = explained.intercept + sum(c.weight for c in explained.contributions)
    assert total + explained.others == pytest.approx(explained.logit)


def test_a_scorers_name_carries_its_interval_or_why_it_has_none() -> None:
    from analysis.judge import rater_in_words
    from analysis.models import ScorerRecord

    measured = ScorerRecord(
        scorer_id="s#1", name="s", test_n=40, test_agreement=0.9, test_agreement_ci=(0.8, 0.95)
    )
    few = measured.model_copy(update={"test_agreement_ci": None})
    assert rater_in_words("s#1", {"s#1": measured}).endswith(
        "agreement with people 90.0% [80.0%, 95.0%] on 40 test steps)"
    )
    assert "90.0% (too few sessions for an interval) on 40" in rater_in_words("s#1", {"s#1": few})
    assert "on its model card" in rater_in_words("s#1", {"s#1": None})
    assert rater_in_words("judge#2", {"s#1": measured}) == "judge#2"  # an LLM judge: its name
