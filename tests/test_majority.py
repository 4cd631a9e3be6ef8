"""One rule from a score to a label: every place a score becomes ``correct`` or
``incorrect`` gives what "at least half the valid votes said correct" gives, an even split
counting as correct."""

from __future__ import annotations

import json

import pytest
from test_otlp_import import EVALUATION, _agent_run, _document, _write

import analysis
from analysis.judge import ExternalColumns, changed_verdicts
from analysis.models import CORRECT, INCORRECT, majority_label, verdict_of
from analysis.study import judgment_labels
from analysis.views import labelling_queue

SCORES = [0.0, 0.25, 0.49, 0.5, 0.51, 2 / 3, 1.0]


def _expected(score: float) -> str:
    votes, said_correct = 100, round(score * 100)  # a score is the share of votes "correct"
    return "correct" if said_correct * 2 >= votes else "incorrect"


def test_the_verdicts_are_named_once():
    assert (CORRECT, INCORRECT) == ("correct", "incorrect")


@pytest.mark.parametrize("score", SCORES)
def test_every_place_a_score_becomes_a_label_says_the_same(score, tmp_path):
    expected = _expected(score)
    assert majority_label(score) == expected
    assert verdict_of(score) == ("split" if 0 < score < 1 else expected)

    # another platform's OTLP evaluation event on a turn
    event = {"gen_ai.evaluation.name": "tool_selection_quality"}
    event["gen_ai.evaluation.score.value"] = score
    spans = _agent_run(events=[(EVALUATION, event)])
    (from_otlp,) = analysis.load([_write(tmp_path, _document(spans))]).judgments
    assert [vote.verdict for vote in from_otlp.votes] == [expected]

    # another platform's export of scores
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps({"session_id": "s", "turn_index": 0, "score": score}) + "\n")
    (external,) = analysis.load_judgments(export, ExternalColumns(explanation=None))
    assert [vote.verdict for vote in external.votes] == [expected]

    # the judge's label beside people's, and a verdict another judge changed
    judged = external.model_copy(update={"step_index": 0, "judge_id": "a#1"})
    assert judgment_labels([judged])["value"].to_list() == [expected]
    unanimous = judged.model_copy(update={"score": 1.0, "judge_id": "b#2"})
    changes = changed_verdicts([judged], [unanimous])
    assert [(c.before, c.after) for c in changes] == (
        [] if expected == "correct" else [("incorrect", "correct")]
    )

    # the labelling queue: split votes first, then steps judged incorrect
    (row,) = labelling_queue([judged], limit=None).iter_rows(named=True)
    reason = {"split": "split vote", "incorrect": "judged incorrect", "correct": ""}
    assert row["reason"] == reason[verdict_of(score)]
