"""Tables and charts of the workbench, built from the sample data and checked independently."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from fractions import Fraction
from pathlib import PurePosixPath
from typing import Any

import polars as pl
import pytest
from conftest import BAD, RICH

import analysis
import analysis.study
import analysis.views
from analysis.findings import Finding
from analysis.models import Judgment, Vote
from analysis.views import (
    ablation_chart,
    ablation_table,
    score_distribution_chart,
    session_overview,
    step_scores_chart,
    step_table,
    step_to_open,
    turn_scores_chart,
    turn_table,
)

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
        assert row["errors"] == sum(  # those the Turn page shows under full
            1
            for f in findings
            if f.session_id == row["session_id"]
            and f.severity == "error"
            and f.condition in (None, "full")
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
    bars = ablation_chart(ablation).to_dict()["layer"][0]
    assert bars["encoding"]["yOffset"]["sort"] == ["bare", "catalog_no_call", "full"]


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
    return Judgment(
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
        spec_name="test",
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
    params = {param["name"]: param for param in spec.get("params") or points["params"]}
    assert set(params) == {"step_pick", "step_zoom", "turn_pick"}  # no gap in this session
    pick, zoom = params["step_pick"], params["step_zoom"]
    assert params["turn_pick"]["select"]["fields"] == ["turn_index"]  # a band opens its turn
    assert pick["select"]["fields"] == ["turn_index", "step_index", "parent_call_id"]
    assert zoom["bind"] == "scales"  # the step axis zooms and pans
    assert zoom["select"]["encodings"] == ["x"]
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
    assert analysis.views.chart_to_png(chart, scale=1).startswith(b"\x89PNG")


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


def test_menu_comparison_marks_each_menu_as_sets_say(loaded):
    from analysis.models import ToolCatalog, ToolDef
    from analysis.views import menu_comparison

    result, _ = loaded
    session = next(s for s in result.sessions if s.session_id == BAD)
    turn = session.turns[1]
    judged = analysis.render_turn(session, turn, "bare").tools
    baseline = analysis.catalog.baseline_catalog()
    live = ToolCatalog(tools=[ToolDef(name="mcp__docs__search", description="search docs")])
    live.tools.append(baseline.tools[0])
    trace = ToolCatalog(tools=[judged[0], ToolDef(name="Other")])
    menus = {
        "judged": {t.name for t in judged},
        "baseline": set(baseline.names()),
        "live": set(live.names()),
        "trace": set(trace.names()),
    }
    frame = menu_comparison(judged, baseline, live, trace)
    assert frame.columns == ["tool", *menus, "also_in", "description"]
    assert sorted(frame["tool"]) == sorted(set().union(*menus.values()))
    assert frame["tool"][: len(judged)].to_list() == [t.name for t in judged]
    for row in frame.iter_rows(named=True):
        on = {menu: row["tool"] in names for menu, names in menus.items()}
        assert {menu: row[menu] for menu in menus} == on
        others = [m for m in ("baseline", "live", "trace") if on[m]]
        if not on["judged"]:
            assert row["also_in"] == "not judged: " + ", ".join(others)
        else:
            assert row["also_in"] == (", ".join(others) or "only here")
    assert (
        frame.filter(pl.col("tool") == "mcp__docs__search")["description"].item() == "search docs"
    )
    only_judged = menu_comparison([ToolDef(name="Solo")], None, None, trace)
    assert only_judged.columns == ["tool", "judged", "trace", "also_in", "description"]
    assert only_judged.row(0, named=True)["also_in"] == "only here"


def test_ablation_chart_has_a_legend_written_values_and_round_trips(loaded):
    result, _ = loaded
    ablation = ablation_table(result.judgments)
    spec = ablation_chart(ablation).to_dict()
    assert json.loads(json.dumps(spec)) == spec
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["bar", "tick", "text"]
    bars, ticks, values = spec["layer"]
    legend = bars["encoding"]["color"]["legend"]
    assert legend is not None
    assert legend["title"] == "condition"
    assert values["encoding"]["text"] == {
        "field": "mean_tsq",
        "format": ".2f",
        "type": "quantitative",
    }
    assert ticks["encoding"]["x"]["field"] == "mean_tsq"  # a zero still gets a mark
    rows = next(iter(spec["datasets"].values()))
    assert any(r["mean_tsq"] == 0 for r in rows)
    labels = {r["session_id"]: r["session"] for r in rows}
    assert all(len(label) <= 30 for label in labels.values())
    assert len(set(labels.values())) == len(labels)
    assert labels["retail.synthetic/task0-trial0"] == "retail.synthetic/task0-trial0"
    assert bars["encoding"]["y"]["field"] == "session"
    assert "session_id" in {t["field"] for t in bars["encoding"]["tooltip"]}


OVERVIEW_COUNTS = ["turns", "tool_calls", "mean_tsq", "split_turns", "errors", "warnings", "infos"]


def test_overview_names_each_session_and_lists_scored_ones_first(loaded):
    result, findings = loaded
    overview = session_overview(result.sessions, result.judgments, findings)
    assert overview.columns[:4] == ["name", "first_ask", "project", "started"]
    assert overview.columns[-1] == "session_id"
    assert set(overview.columns) >= {"format", "title", "source", *OVERVIEW_COUNTS}
    full = [j for j in result.judgments if j.condition == "full"]
    scored = {j.session_id for j in full if j.score is not None}
    by_id = {s.session_id: s for s in result.sessions}
    ids = overview["session_id"].to_list()
    assert sorted(ids) == sorted(by_id)
    flags = [sid in scored for sid in ids]
    assert flags == sorted(flags, reverse=True)
    assert any(flags)
    assert not all(flags)
    for row in overview.iter_rows(named=True):
        session = by_id[row["session_id"]]
        ask = next(t.ask for t in session.turns if t.ask.strip())
        assert row["first_ask"] == ask
        assert row["project"] == (PurePosixPath(session.cwd).name if session.cwd else None)
        assert row["started"] == session.turns[0].timestamp
        assert (row["mean_tsq"] is not None) == (row["session_id"] in scored)


def test_overview_shortens_names_and_sorts_by_start_within_scored(loaded):
    result, _ = loaded
    rich = next(s for s in result.sessions if s.session_id == RICH)
    start = rich.turns[0].timestamp
    assert start is not None

    def copy(session_id, hours, **changes):
        turns = [
            t.model_copy(update={"timestamp": start + timedelta(hours=hours, minutes=t.index)})
            for t in rich.turns
        ]
        return rich.model_copy(update={"session_id": session_id, "turns": turns, **changes})

    long_title = "Tidy   the\nwebhook retry code " + "and more " * 10
    sessions = [
        copy("late", 3, title=long_title),
        copy("unscored-early", 0, cwd="C:\\Users\\dev\\shop-web\\"),
        copy("early", 1, title="  "),
        copy(
            "never-started", 2, turns=[t.model_copy(update={"timestamp": None}) for t in rich.turns]
        ),
    ]
    judgments = [
        j.model_copy(update={"session_id": sid})
        for j in result.judgments
        if j.session_id == RICH
        for sid in ("late", "early", "never-started")
    ]
    overview = session_overview(sessions, judgments, [])
    assert overview["session_id"].to_list() == ["early", "late", "never-started", "unscored-early"]
    names = dict(zip(overview["session_id"], overview["name"], strict=True))
    flat = " ".join(long_title.split())
    assert names["late"] == flat[:59].rstrip() + "…"
    assert len(names["late"]) <= 60
    assert names["early"] == rich.turns[0].ask  # a blank title gives way to the first ask
    projects = dict(zip(overview["session_id"], overview["project"], strict=True))
    assert projects["unscored-early"] == "shop-web"
    assert projects["late"] == "shop-api"


def test_score_distribution_counts_sessions_on_an_integer_axis(loaded):
    result, findings = loaded
    overview = session_overview(result.sessions, result.judgments, findings)
    y = score_distribution_chart(overview).to_dict()["encoding"]["y"]
    assert (y["axis"]["tickMinStep"], y["axis"]["format"]) == (1, "d")
    assert y["title"] == "sessions"


# Every public chart function, built from the bundled sample. A chart function added to
# analysis (or analysis.views / analysis.study) without a builder here fails the test below.

CHART_MODULES = (analysis, analysis.views, analysis.study)


def public_charts() -> dict[str, Callable[..., Any]]:
    """Every ``*_chart`` name in the public surface, with its function."""
    return {
        name: getattr(module, name)
        for module in CHART_MODULES
        for name in module.__all__
        if name.endswith("_chart")
    }


@pytest.fixture(scope="module")
def sample_inputs(loaded) -> dict[str, Any]:
    """The inputs the charts are drawn from, as the workbench and the notebooks compute them:
    the sample transcripts and judgments, and the bundled council-vs-human study."""
    result, findings = loaded
    rich = next(s for s in result.sessions if s.session_id == RICH)
    study = analysis.load_study(analysis.sample_data_dir() / "council_vs_human")
    return {
        "result": result,
        "findings": findings,
        "rich": rich,
        "tables": analysis.study_tables(study, resamples=20),
        "pairs": analysis.agreement_report(study.labels, resamples=20).pairs_frame(),
    }


CHART_INPUTS: dict[str, Callable[[dict[str, Any]], tuple[Any, ...]]] = {
    "ablation_chart": lambda d: (analysis.ablation_table(d["result"].judgments),),
    "findings_chart": lambda d: (analysis.findings_summary(d["findings"]),),
    "score_distribution_chart": lambda d: (
        analysis.session_overview(d["result"].sessions, d["result"].judgments, d["findings"]),
    ),
    "step_scores_chart": lambda d: (
        analysis.views.step_table(d["rich"], d["result"].judgments, d["findings"]),
    ),
    "tool_usage_chart": lambda d: (analysis.tool_usage(d["result"].sessions),),
    "turn_scores_chart": lambda d: (
        analysis.turn_table(d["rich"], d["result"].judgments, d["findings"]),
    ),
    "raw_agreement_chart": lambda d: (d["tables"].raw_agreement,),
    "causes_chart": lambda d: (d["tables"].causes,),
    "adjudication_load_chart": lambda d: (d["tables"].adjudication_load,),
    "ai_sides_chart": lambda d: (d["tables"].ai_sides,),
    "followed_rule_chart": lambda d: (d["tables"].ai_sides,),
    "before_after_chart": lambda d: (d["tables"].before_after,),
    "kappa_intervals_chart": lambda d: (d["pairs"],),
}
"""How to build each public chart's input from the sample data."""


def test_every_public_chart_function_is_covered():
    assert set(public_charts()) == set(CHART_INPUTS), (
        "a public *_chart function needs an entry in CHART_INPUTS (and one gone needs removing)"
    )


@pytest.mark.parametrize("name", sorted(CHART_INPUTS))
def test_chart_validates_on_the_sample_data(name, sample_inputs):
    chart = public_charts()[name](*CHART_INPUTS[name](sample_inputs))
    spec = chart.to_dict()  # Altair validates the spec against the Vega-Lite schema here
    assert json.loads(json.dumps(spec)) == spec
    datasets = spec.get("datasets", {})
    assert datasets, "the chart carries its data"
    assert all(rows for rows in datasets.values()), "drawn from real rows, not an empty table"


def test_turns_without_a_step_are_labelled_gaps_on_the_step_chart(claude_code_sessions):
    """On the real sessions: each turn with no tool-calling response (a /compact, a plain
    answer) is a gap where it falls, named on the chart; consecutive ones make one gap."""
    seen = 0
    for session in claude_code_sessions.values():
        steps = analysis.views.step_table(session, [], [])
        gaps = analysis.views.turn_gaps(session, steps)
        stepless = [
            t.index
            for t in session.turns
            if not any(m.tool_calls for m in t.messages if hasattr(m, "tool_calls"))
        ]
        covered = []
        for row in gaps.iter_rows(named=True):
            first, *rest = map(int, re.findall(r"\d+", row["label"]))
            last = rest[0] if rest else first
            covered += range(first, last + 1)
            before = steps.filter(pl.col("turn_index") < first)["position"]
            expected_at = (before.max() if before.len() else steps["position"].min()) + 0.5
            if not before.len():
                expected_at -= 1
            assert row["at"] == expected_at
        assert covered == stepless
        seen += len(stepless)
        if gaps.height and steps.height:
            spec = json.dumps(analysis.views.step_scores_chart(steps, gaps).to_dict())
            assert all(label in spec for label in gaps["label"])
    assert seen, "the corpus has turns without a step"


def test_a_built_in_without_claude_codes_own_text_says_why(claude_code_sessions):
    """The menu table gives Claude Code's own description from the tools data, and where the
    data has none (a description the agent builds when it runs), the reason, never a blank."""
    from importlib import resources

    data = json.loads(
        resources.files("analysis").joinpath("data/claude_code_tools.json").read_text()
    )
    reasons = 0
    for session in claude_code_sessions.values():
        turn = session.turns[0]
        menu = analysis.catalog_for_turn(session, turn).catalog
        frame = analysis.views.catalog_frame(menu)
        for tool, row in zip(menu.tools, frame.iter_rows(named=True), strict=True):
            if tool.since is None:
                continue
            held = next(
                d
                for d in data["tools"][tool.name]
                if (d["since"], d["until"]) == (tool.since, tool.until)
            )
            expected = held["description"] or analysis.views.UNEXTRACTED
            assert row["agent_description"] == expected
            reasons += held["description"] is None
    assert reasons, "some built-in of the corpus's versions has no extracted description"


def _label_boxes(svg: str) -> list[list[tuple[float, float, float, float]]]:
    """Each axis's tick labels as drawn, as boxes (left, top, right, bottom), from the SVG's
    text: width estimated from the font size (half an em a character, under the real width
    of digits), rotated labels left out."""
    axes = []
    for group in re.finditer(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', svg, re.S):
        boxes = []
        for anchor, x, y, size, text in re.findall(
            r'<text text-anchor="(\w+)" transform="translate\(([-\d.e]+),([-\d.e]+)\)"'
            r'[^>]*font-size="([\d.]+)px"[^>]*>([^<]*)</text>',
            group.group(1),
        ):
            width = 0.5 * float(size) * len(text)
            left = float(x) - {"start": 0, "middle": width / 2, "end": width}[anchor]
            boxes.append((left, float(y) - float(size), left + width, float(y)))
        axes.append(boxes)
    return axes


def _slanted_too_close(svg: str) -> list[tuple[float, float]]:
    """Slanted tick labels whose neighbours are nearer, across the slant, than a line of text."""
    import math

    close = []
    for group in re.finditer(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', svg, re.S):
        slanted = re.findall(
            r'transform="translate\(([-\d.e]+),[-\d.e]+\) rotate\(([-\d.e]+)\)"'
            r'[^>]*font-size="([\d.]+)px"',
            group.group(1),
        )
        xs = sorted(float(x) for x, _, _ in slanted)
        for (_, angle, size), left, right in zip(slanted, xs, xs[1:], strict=False):
            if (right - left) * abs(math.sin(math.radians(float(angle)))) < 0.9 * float(size):
                close.append((left, right))
    return close


def _overlapping(boxes):
    return [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]


def test_drawn_charts_have_no_colliding_tick_labels_and_whole_counts(claude_code_sessions):
    """The charts as Vega draws them (SVG), on the corpus's largest session and a collection
    of sessions and weeks: no two tick labels of an axis overlap, and a count axis ticks whole
    numbers only."""
    from test_report import _rotation_judgments

    from analysis.index import trend_chart

    session = max(claude_code_sessions.values(), key=lambda s: sum(1 for _ in s.tool_calls()))
    judgments = _rotation_judgments([session])
    steps = analysis.views.step_table(session, judgments, [])
    turns = analysis.views.turn_table(session, judgments, [])
    overview = pl.DataFrame(
        {
            "mean_tsq": [(i * 7 % 37) / 37 for i in range(300)],
            "session_id": list(map(str, range(300))),
        }
    )
    weeks = pl.DataFrame(
        {
            "week": [f"2026-{m:02d}-{d:02d}" for m in range(1, 6) for d in (5, 12, 19, 26)],
            "tsq": [0.8] * 20,
            "tsq_low": [0.7] * 20,
            "tsq_high": [0.9] * 20,
            "judged": [40] * 20,
            "steps": [50] * 20,
            "sampled": [True] * 20,
        }
    )
    versions = ["2.1.38", "2.1.39", "codex 0.125.0", "codex 0.128.0-alpha.1"]
    tools = [f"mcp__server_{n:02d}__a_long_tool_name" for n in range(20)]
    charts = {
        "step scores": analysis.views.step_scores_chart(
            steps, analysis.views.turn_gaps(session, steps)
        ),
        "turn scores": analysis.views.turn_scores_chart(turns),
        "score distribution": analysis.views.score_distribution_chart(overview),
        "weekly trend": trend_chart(weeks, "week"),
        # the report's shapes: two weeks, one of sessions without a start; two versions, one
        # of sessions without a version
        "two weeks": trend_chart(
            weeks.head(2).with_columns(pl.Series("week", ["2026-03-02", None])), "week"
        ),
        "two versions": trend_chart(
            weeks.head(2).with_columns(pl.Series("version", ["2.1.39", None])), "version"
        ),
        # two agents' versions, as a report of Claude Code sessions and Codex rollouts has them
        "four versions": trend_chart(
            weeks.head(4).with_columns(pl.Series("version", versions)), "version"
        ),
        "twenty tools": trend_chart(weeks.with_columns(pl.Series("tool", tools)), "tool"),
    }
    groups = {"four versions": versions, "twenty tools": tools}
    for name, chart in charts.items():
        svg = analysis.views.chart_to_svg(chart)
        axes = _label_boxes(svg)
        assert axes, name
        shown = set(re.findall(r'opacity="1">([^<]*)</text>', svg))  # Vega hides with 0
        for group in groups.get(name, []):  # none left out to make room
            assert group in shown, f"{name}: {group} has no label"
        for boxes in axes:
            assert not _overlapping(boxes), f"{name}: tick labels collide"
        assert not _slanted_too_close(svg), f"{name}: slanted tick labels collide"
        assert ">null<" not in svg, f"{name}: a group without a value reads null"
    drawn = analysis.views.chart_to_svg(charts["score distribution"])
    count_axis = re.findall(r'role-axis-label".*?</g>', drawn, re.S)[-1]  # sessions per bin
    ticks = re.findall(r">([^<>]+)</text>", count_axis)
    assert ticks
    assert all(tick.replace(",", "").isdigit() for tick in ticks), ticks


def test_the_score_distribution_counts_any_number_of_sessions_in_ten_bins():
    import numpy as np

    rng = np.random.default_rng(3)
    scores = rng.uniform(0, 1, 12_000).round(3)
    scores[:7] = 1.0  # a perfect session falls in the last bin
    overview = pl.DataFrame(
        {"session_id": [str(i) for i in range(12_003)], "mean_tsq": [*scores, None, None, None]}
    )
    spec = json.loads(score_distribution_chart(overview).to_json(validate=True))  # no row limit
    rows = next(iter(spec["datasets"].values()))
    # [0, 0.1), …, [0.9, 1], each score read as the decimal it is (0.3 in [0.3, 0.4))
    tenths = Counter(min(int(Fraction(str(score)) * 10), 9) for score in scores)
    assert [row["sessions"] for row in rows] == [tenths[b] for b in range(10)]
    assert sum(row["sessions"] for row in rows) == 12_000


def _long_session(write_jsonl) -> analysis.Session:
    """38 turns and 255 steps, as a long real session has them: a few turns of many steps,
    many of few, and turns without a step (one alone, two together, the first and the last)."""
    from records import assistant, result, text, tool_use, user

    stepless = {0, 9, 17, 18, 30, 37}
    counts = [0 if t in stepless else (40 if t in (3, 25) else 3 + t % 3) for t in range(38)]
    counts[1] += 255 - sum(counts)
    assert counts[1] > 0
    records, parent = [], None
    for turn, count in enumerate(counts):
        ask = f"u{turn}"
        records.append(user(ask, f"ask number {turn}", parent))
        parent = ask
        if not count:
            records.append(assistant(f"a{turn}", f"msg_{turn}", text("done"), parent))
            parent = f"a{turn}"
        for step in range(count):
            call = f"t{turn}_{step}"
            records.append(
                assistant(f"a{call}", f"m{call}", tool_use(call, "Read", file_path="x"), parent)
            )
            records.append(result(f"r{call}", call, "content", parentUuid=f"a{call}"))
            parent = f"r{call}"
    (session,) = analysis.load([write_jsonl(records)]).sessions
    assert len(session.turns) == 38
    return session


def _text_mark_boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """The chart's text marks along the top (turn and gap names) as drawn, as boxes (left,
    top, right, bottom) with their text, the width estimated as the axis labels' is."""
    boxes = []
    for group in re.finditer(r'<g class="mark-text role-mark[^"]*"[^>]*>(.*?)</g>', svg, re.S):
        for anchor, x, y, size, said in re.findall(
            r'<text[^>]*text-anchor="(\w+)" transform="translate\(([-\d.e]+),([-\d.e]+)\)"'
            r'[^>]*font-size="([\d.]+)px"[^>]*>([^<]*)</text>',
            group.group(1),
        ):
            if not said:
                continue
            width = 0.5 * float(size) * len(said)
            left = float(x) - {"start": 0, "middle": width / 2, "end": width}[anchor]
            boxes.append((left, float(y) - float(size), left + width, float(y), said))
    return boxes


def test_a_long_sessions_turn_names_never_collide_and_every_turn_is_a_click_away(write_jsonl):
    session = _long_session(write_jsonl)
    steps = analysis.views.step_table(session, [], [])
    assert steps.height == 255
    gaps = analysis.views.turn_gaps(session, steps)
    chart = analysis.views.step_scores_chart(steps, gaps)
    boxes = _text_mark_boxes(analysis.views.chart_to_svg(chart))
    names = [said for *_, said in boxes]
    assert len(names) >= 8, names  # the top is used
    assert any("no step" in said for said in names)  # gaps are named too, where they fit
    assert not _overlapping([box[:4] for box in boxes]), names
    assert all(box[0] >= 0 and box[2] <= 800 for box in boxes), "a name runs off the chart"
    spec = chart.to_dict()
    params = spec.get("params", []) + [
        p for layer in spec["layer"] for p in layer.get("params", [])
    ]
    picks = {p["name"]: p["select"]["fields"] for p in params if "fields" in p.get("select", {})}
    assert picks["turn_pick"] == picks["gap_pick"] == ["turn_index"]
    bands = next(rows for rows in spec["datasets"].values() if rows and "turn_label" in rows[0])
    stepped = set(steps["turn_index"].to_list())
    assert {row["turn_index"] for row in bands} == stepped  # a band to click for each
    for turn in set(range(38)) - stepped:  # and a gap line for each turn without a step
        assert any(
            first <= turn <= int(re.findall(r"\d+", label)[-1])
            for first, label in gaps.select("turn_index", "label").iter_rows()
        ), turn
