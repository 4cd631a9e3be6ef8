"""The app's side of the alignment loop: the alignment sample as a data source, one judge at a
time, the Turn page's label form, split and next unlabelled step."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import open_page
from test_trends import _raw_steps, _trends_json

import analysis
from analysis.align import sample_store

ALIGNMENT = analysis.sample_data_dir() / "alignment"
JUDGE_IDS = sorted(
    json.loads(path.open().readline())["judge_id"]
    for path in (ALIGNMENT / "judgments").glob("*.jsonl")
)
pytestmark = pytest.mark.usefixtures("fresh_app")


def _first_bash_step() -> tuple[str, int]:
    for row in csv.DictReader((ALIGNMENT / "labels.csv").open()):
        if row["reason"].startswith("Use the Grep"):
            return row["session_id"], int(row["turn_index"])
    raise AssertionError("the sample has a grep-through-Bash step")


def _score_of(at, judge_id: str, session: str, turn: int) -> float:
    path = next(p for p in (ALIGNMENT / "judgments").glob("*.jsonl") if judge_id in p.read_text())
    for line in map(json.loads, path.open()):
        if (line["session_id"], line["turn_index"]) == (session, turn):
            return line["score"]
    raise AssertionError


def test_a_session_judged_by_two_judges_shows_one_at_a_time():
    session, turn = _first_bash_step()
    at = open_page("pages/turn.py", source="alignment", session=session, turn=str(turn))
    assert not at.exception
    choice = at.sidebar.selectbox(key="chosen_judge")
    assert sorted(choice.options[1:]) == JUDGE_IDS
    for judge_id in JUDGE_IDS:
        at = choice.set_value(judge_id).run()
        choice = at.sidebar.selectbox(key="chosen_judge")
        expected = _score_of(at, judge_id, session, turn)
        assert at.metric[0].value == f"{expected:.2f}"  # the turn's one step: its judge's score
        assert at.query_params["judge"] in (judge_id, [judge_id])


def test_the_label_form_shows_the_split_and_moves_to_the_next_unlabelled_step():
    splits = {s: a.split for s, a in sample_store().splits().items()}
    session, turn = _first_bash_step()
    at = open_page("pages/turn.py", source="alignment", session=session, turn=str(turn), step="0")
    assert not at.exception
    shown = [c.value for c in at.caption]
    if session in splits:
        assert any(f"Split: **{splits[session]}**" in text for text in shown)
    else:
        assert any("Split: not assigned yet" in text for text in shown)
    # Every step of the sample is labelled: nothing is left to label.
    assert at.button(key="next_unlabelled").disabled


def test_next_unlabelled_step_opens_the_first_of_the_labelling_queue():
    rich = "5eed0000-0000-4000-8000-000000000002"
    at = open_page("pages/turn.py", session=rich, turn="0", step="0")
    assert not at.exception
    judgments = analysis.load([analysis.sample_data_dir() / "judgments"]).judgments
    split = [
        j for j in judgments if j.condition == "full" and j.score is not None and 0 < j.score < 1
    ]
    at.button(key="next_unlabelled").click().run()
    assert at.title[0].value == "Turn"
    place = (at.query_params["session"], at.query_params["turn"])
    assert place == (split[0].session_id, str(split[0].turn_index))


@pytest.mark.slow
def test_the_trends_page_shows_the_chosen_judges_tsq_per_tool_with_intervals(tmp_path):
    """The page's figures against the ones computed here from the judgments file and the
    transcripts' own records (each turn of the sample is one response with one call)."""
    judge = JUDGE_IDS[0]
    at = open_page("pages/trends.py", source="alignment", judge=judge)
    assert not at.exception
    at.segmented_control(key="trends_by").set_value("tool").run()
    assert not at.exception
    shown = {row["tool"]: row for row in at.dataframe[0].value.to_dict("records")}
    tools = {key: tool for key, (tool, _) in _raw_steps(ALIGNMENT / "transcripts").items()}
    path = next(p for p in (ALIGNMENT / "judgments").glob("*.jsonl") if judge in p.read_text())
    scores: dict[str, list[float]] = {}
    for line in map(json.loads, path.open()):
        scores.setdefault(tools[line["session_id"], line["turn_index"]], []).append(line["score"])
    assert set(shown) == set(scores)
    for tool, values in scores.items():
        assert shown[tool]["judged"] == len(values)
        assert shown[tool]["tsq"] == pytest.approx(sum(values) / len(values))
        assert shown[tool]["tsq_low"] <= shown[tool]["tsq"] <= shown[tool]["tsq_high"]
    assert any(judge.split("#")[1] in caption.value for caption in at.caption)  # whose
    store = analysis.align.sample_store().path  # the labels the page compares with
    by_cli = _trends_json(
        str(ALIGNMENT),
        "--by",
        "tool",
        "--judge-id",
        judge,
        "--labels",
        str(store),
        "--index",
        str(tmp_path / "index.duckdb"),
    )
    for group in by_cli["groups"]:  # the page (in percent) and the CLI on the same labels
        assert shown[group["tool"]]["labelled"] == group["labelled"]
        if group["labelled"]:
            assert shown[group["tool"]]["agreement"] == pytest.approx(100 * group["agreement"])
    assert sum(group["labelled"] for group in by_cli["groups"]) > 20
    first, second = sorted(scores)[:2]
    at.selectbox(key="trends_a_tool").set_value(first).run()
    at.selectbox(key="trends_b_tool").set_value(second).run()
    compared = next(t.value for t in at.text if t.value.startswith("TSQ "))
    expected = sum(scores[second]) / len(scores[second]) - sum(scores[first]) / len(scores[first])
    assert f"{expected:+.2f}" in compared
