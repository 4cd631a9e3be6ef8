"""Tables and charts of the workbench, built from the sample data and checked independently."""

from __future__ import annotations

import json

import polars as pl
import pytest

import analysis
from analysis._charts import (
    ablation_chart,
    score_distribution_chart,
    step_scores_chart,
    turn_scores_chart,
)
from analysis._lint import Finding
from analysis._models import TurnJudgment, Vote
from analysis._views import (
    ablation_table,
    session_overview,
    step_table,
    step_to_open,
    turn_table,
)

BAD = "5eed0000-0000-4000-8000-000000000001"
RICH = "5eed0000-0000-4000-8000-000000000002"
REAL = "258c7280-ae70-4798-800f-63464d01a85d"


def mean(values):
    return sum(values) / len(values)


def full_turn_means(judgments, session_id):
    """Each judged turn's TSQ under ``full``: the mean of its steps' scores, worked out here."""
    by_turn = {}
    for j in judgments:
        if j.session_id == session_id and j.condition == "full" and j.score is not None:
            by_turn.setdefault(j.turn_index, []).append(j.score)
    return {turn: mean(scores) for turn, scores in by_turn.items()}


def test_overview_rows_match_the_judgments(loaded):
    result, findings = loaded
    overview = session_overview(result.sessions, result.judgments, findings)
    assert overview.height == len(result.sessions)
    for row in overview.iter_rows(named=True):
        turns = full_turn_means(result.judgments, row["session_id"])
        expected = mean(list(turns.values())) if turns else None
        assert (
            row["mean_tsq"] == pytest.approx(expected)
            if expected is not None
            else row["mean_tsq"] is None
        )
        split_steps = {
            j.turn_index
            for j in result.judgments
            if j.session_id == row["session_id"]
            and j.condition == "full"
            and j.score is not None
            and 0 < j.score < 1
        }
        assert row["split_turns"] == len(split_steps)
        assert row["errors"] == sum(
            1 for f in findings if f.session_id == row["session_id"] and f.severity == "error"
        )
    bad = overview.filter(overview["session_id"] == BAD).row(0, named=True)
    assert bad["mean_tsq"] == 0.25


def test_turn_table_labels_split_votes(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    table = turn_table(session, result.judgments, findings)
    assert table["turn_index"].to_list() == [0, 1, 2, 3]
    last = table.row(3, named=True)
    assert (last["verdict_kind"], last["votes_label"]) == ("split", "2 of 3 judges")
    assert last["ask"] == "yes do #1"


def test_charts_serialise_and_carry_what_they_promise(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    turns = turn_table(session, result.judgments, findings)
    spec = turn_scores_chart(turns).to_dict()
    json.loads(json.dumps(spec))
    points = spec["layer"][1]
    assert points["encoding"]["color"]["field"] == "verdict_kind"
    assert "split" in points["encoding"]["color"]["scale"]["domain"]
    params = spec.get("params") or points.get("params")
    assert params[0]["select"]["fields"] == ["turn_index"]
    assert {t["field"] for t in points["encoding"]["tooltip"]} >= {"votes_label", "score"}
    overview = session_overview(result.sessions, result.judgments, findings)
    assert score_distribution_chart(overview).to_dict()["mark"]["type"] == "bar"
    ablation = ablation_table(result.judgments)
    bad = ablation.filter(ablation["session_id"] == BAD)
    assert dict(zip(bad["condition"], bad["mean_tsq"], strict=True)) == {
        "bare": 1.0,
        "catalog_no_call": 0.0,
        "full": 0.25,
    }
    assert ablation_chart(ablation).to_dict()["encoding"]["x"]["sort"] == [
        "bare",
        "catalog_no_call",
        "full",
    ]


def test_usage_and_findings_charts_carry_their_tables(loaded):
    result, findings = loaded
    usage = analysis.tool_usage(result.sessions)
    spec = analysis.tool_usage_chart(usage).to_dict()
    json.loads(json.dumps(spec))
    assert spec["encoding"]["y"]["sort"] == usage["tool"].to_list()
    assert spec["transform"][0]["fold"] == ["main_calls", "subagent_calls"]
    summary = analysis.findings_summary(findings)
    spec = analysis.findings_chart(summary).to_dict()
    assert spec["encoding"]["color"]["scale"]["domain"] == ["error", "warning", "info"]
    rows = next(iter(spec["datasets"].values()))
    assert {r["code"]: r["findings"] for r in rows} == dict(
        zip(summary["code"], summary["findings"], strict=True)
    )


def test_pooled_ablation_has_one_row_per_condition(loaded):
    result, _ = loaded
    pooled = ablation_table(result.judgments, by_session=False)
    assert pooled["session_id"].unique().to_list() == ["all sessions"]
    full = [
        score
        for session in result.sessions
        for score in full_turn_means(result.judgments, session.session_id).values()
    ]
    row = pooled.filter(pooled["condition"] == "full").row(0, named=True)
    assert row["mean_tsq"] == pytest.approx(mean(full))
    assert row["turns"] == len(full)


def tool_calling_responses(path):
    """Message ids of the main chain's responses with a tool_use block, read from raw lines."""
    ids = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record["message"]
        if any(block.get("type") == "tool_use" for block in message["content"]):
            ids.setdefault(message["id"], None)
    return list(ids)


def step_judgment(session_id, turn, step, correct, message_id=None, call=None, condition="full"):
    verdicts = ["correct"] * correct + ["incorrect"] * (3 - correct)
    return TurnJudgment(
        session_id=session_id,
        turn_index=turn,
        step_index=step,
        message_id=message_id,
        parent_call_id=call,
        score=correct / 3,
        votes=[Vote(verdict=v, reasoning=f"judge says {v}") for v in verdicts],
        n_requested=3,
        n_valid=3,
        n_discarded=0,
        model="hand-built",
        rubric_version="test",
        condition=condition,
        catalog_size=20,
        call_rendered=True,
        context_chars=0,
    )


@pytest.fixture(scope="module")
def real_session(corpus):
    path = corpus / "claude-code" / "spotter" / f"{REAL}.jsonl"
    (session,) = analysis.load([path]).sessions
    return path, session


def test_step_table_has_one_row_per_tool_calling_response_of_a_real_session(real_session):
    path, session = real_session
    expected_ids = tool_calling_responses(path)
    judgments = []
    for turn in session.turns:
        for index, message in enumerate(turn.messages):
            if message.tool_calls:
                judgments.append(step_judgment(REAL, turn.index, index, index % 4, message.id))
    judgments.append(step_judgment(REAL, 0, 3, 3, condition="bare"))  # another condition
    spawn = next(
        (index, call.id)
        for index, message in enumerate(session.turns[0].messages)
        for call in message.tool_calls
        if call.subagent is not None and call.subagent.messages[0].tool_calls
    )
    judgments.append(step_judgment(REAL, 0, 0, 0, call=spawn[1]))
    findings = [
        Finding(
            session_id=REAL,
            turn_index=0,
            step_index=2,
            code="SPLIT_VOTE",
            severity="info",
            message="hand-made",
        )
    ]

    table = step_table(session, judgments, findings)

    main = table.filter(table["parent_call_id"].is_null())
    assert main.height == len(expected_ids) == 149
    assert main["message_id"].to_list() == expected_ids
    assert table["position"].to_list() == list(range(table.height))
    subagent = table.filter(table["parent_call_id"] == spawn[1]).row(0, named=True)
    spawner = main.filter(main["step_index"] == spawn[0]).row(0, named=True)
    assert subagent["position"] == spawner["position"] + 1
    assert subagent["score"] == 0.0
    main_scores = [(i % 4) / 3 for i, m in enumerate(session.turns[0].messages) if m.tool_calls]
    assert table["turn_score"].unique().to_list() == [pytest.approx(mean([*main_scores, 0.0]))]
    third = main.row(2, named=True)
    assert (third["score"], third["verdict_kind"]) == (pytest.approx(2 / 3), "split")
    assert third["votes_label"] == "2 of 3 judges said correct"
    assert main.filter(main["step_index"] == 2)["findings"].to_list() == [["SPLIT_VOTE"]]
    assert sum(len(codes) for codes in table["findings"]) == 1
    unjudged = step_table(session, [], [])
    assert unjudged.height == 149
    assert set(unjudged["verdict_kind"]) == {"not judged"}


def test_step_chart_serialises_with_turn_bands_means_and_a_step_pick(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    steps = step_table(session, result.judgments, findings)
    chart = step_scores_chart(steps)
    spec = json.loads(json.dumps(chart.to_dict()))
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rect", "rect", "rule", "point", "text"]
    bands, split, means, points, names = spec["layer"]
    datasets = spec["datasets"]
    turns = datasets[bands["data"]["name"]]
    assert [t["turn_label"] for t in turns] == ["turn 0", "turn 1", "turn 2", "turn 3"]
    assert [(t["start"], t["end"]) for t in turns] == [
        (-0.5, 1.5),
        (1.5, 2.5),
        (2.5, 4.5),
        (4.5, 5.5),
    ]
    assert [t["turn_score"] for t in turns] == pytest.approx([1, 1, 1, 2 / 3])
    assert means["encoding"]["y"]["field"] == "turn_score"
    assert {means["encoding"]["x"]["field"], means["encoding"]["x2"]["field"]} == {"start", "end"}
    assert split["transform"] == [{"filter": "(datum.verdict_kind === 'split')"}]
    assert points["encoding"]["color"]["field"] == "verdict_kind"
    assert "split" in points["encoding"]["color"]["scale"]["domain"]
    assert points["encoding"]["shape"]["field"] == "verdict_kind"
    (pick,) = spec.get("params") or points["params"]
    assert pick["name"] == "step_pick"
    assert pick["select"]["fields"] == ["turn_index", "step_index", "parent_call_id"]
    rows = datasets[points["data"]["name"]]
    split_row = next(r for r in rows if r["verdict_kind"] == "split")
    assert split_row["step_label"] == "turn 3, step 0"
    assert split_row["votes_label"] == "2 of 3 judges said correct"
    assert split_row["tools_called"] == "Edit"
    assert {t["field"] for t in points["encoding"]["tooltip"]} >= {
        "step_label",
        "tools_called",
        "votes_label",
        "score",
    }
    assert names["encoding"]["text"]["field"] == "label"
    assert analysis.chart_to_png(chart, scale=1).startswith(b"\x89PNG")


def test_step_chart_labels_only_turns_with_room(real_session):
    _, session = real_session
    steps = step_table(session, [], [])
    crowded = steps.vstack(  # 40 one-step turns after a long one
        steps.head(40).with_columns(
            turn_index=pl.int_range(1, 41, dtype=pl.Int64),
            position=pl.int_range(149, 189, dtype=pl.Int64),
        )
    )
    spec = step_scores_chart(crowded).to_dict()
    bands = spec["datasets"][spec["layer"][0]["data"]["name"]]
    labels = [band["label"] for band in bands if band["label"]]
    assert len(bands) == 41
    assert labels[0] == "turn 0"
    assert 2 <= len(labels) <= 12


def test_a_link_opens_its_step_or_says_why_not(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    steps = step_table(session, result.judgments, findings)
    turn = session.turns[1]
    in_turn = steps.filter(steps["turn_index"] == 1)
    step, problem = step_to_open(turn, in_turn, "1", "toolu_t1")
    assert (step.index, step.parent_call_id, problem) == (1, "toolu_t1", None)
    assert step.message.tool_calls[0].name == "Read"
    step, problem = step_to_open(turn, in_turn, None, None)
    assert (step.index, step.parent_call_id, problem) == (0, None, None)
    step, problem = step_to_open(turn, in_turn, "7", None)
    assert step.index == 0
    assert problem == "Turn 1 has no step 7: its responses are numbered 0 to 1."
    for not_a_number in ("x", "²"):
        _, problem = step_to_open(turn, in_turn, not_a_number, None)
        assert problem.startswith(f"'{not_a_number}' is not a step number")
    _, problem = step_to_open(turn, in_turn, "0", "toolu_nope")
    assert problem == "Turn 1 has no subagent step 0 under call toolu_nope."
