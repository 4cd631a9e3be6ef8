"""Views across sessions for review: usage, catalog needs, split votes, worst steps, the review
queue."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import BAD, RICH

import analysis
from analysis import (
    Judgment,
    Session,
    ToolCall,
    ToolCatalog,
    ToolDef,
    Turn,
    Vote,
    render_call,
    turn_steps,
)
from analysis.models import AssistantMessage
from analysis.views import ablation_steps, ambiguous_steps, worst_steps

RETAIL = "retail.synthetic/task0-trial0"


def turn_means(judgments, condition):
    """Each judged turn's TSQ, counted here: the mean of its scored steps (or its own score)."""
    scores: dict[tuple[str, int], list[float]] = {}
    for j in judgments:
        if j.condition == condition and j.score is not None:
            scores.setdefault((j.session_id, j.turn_index), []).append(j.score)
    return {turn: sum(values) / len(values) for turn, values in scores.items()}


def _session(catalog: ToolCatalog | None, *names: str) -> Session:
    calls = [ToolCall(id=f"c{n}", name=name) for n, name in enumerate(names)]
    turn = Turn(
        index=0,
        ask="tidy the repo please",
        catalog_index=0 if catalog else None,
        messages=[AssistantMessage(id="m", tool_calls=calls)],
    )
    return Session(
        session_id="s",
        source="s.jsonl",
        format="claude-code",
        catalogs=[catalog] if catalog else [],
        turns=[turn],
    )


def test_tool_usage_counts_every_call_main_and_subagent(loaded):
    result, _ = loaded
    usage = analysis.tool_usage(result.sessions)
    main: Counter[str] = Counter()
    sub: Counter[str] = Counter()
    for session in result.sessions:
        main.update(session.tool_call_counts())
        sub.update(session.subagent_tool_call_counts())
    assert sub, "the samples have subagent calls"
    rows = {row["tool"]: row for row in usage.iter_rows(named=True)}
    assert set(rows) == set(main) | set(sub)
    for tool, row in rows.items():
        assert (row["main_calls"], row["subagent_calls"]) == (main[tool], sub[tool])
        assert row["calls"] == main[tool] + sub[tool]
    assert usage["calls"].to_list() == sorted(usage["calls"].to_list(), reverse=True)
    bash_calls = [
        (session.session_id, turn.index, call)
        for session in result.sessions
        for turn in session.turns
        for call in turn.tool_calls()
        if call.name == "Bash"
    ]
    bash = rows["Bash"]
    assert bash["sessions"] == len({s for s, _, _ in bash_calls})
    assert bash["turns"] == len({(s, t) for s, t, _ in bash_calls})
    errors = sum(bool(c.result and c.result.is_error) for _, _, c in bash_calls)
    assert bash["error_results"] == errors


def test_tool_usage_of_nothing_is_an_empty_table():
    usage = analysis.tool_usage([])
    assert usage.is_empty()
    assert "calls" in usage.columns


def test_catalog_needs_says_where_a_judge_finds_each_used_tool():
    trace = ToolCatalog(
        tools=[
            ToolDef(name="Read", description="Read a local file."),
            ToolDef(name="mcp__db__query"),
        ]
    )
    session = _session(trace, "Read", "mcp__db__query", "Mystery", "Grep", "Grep")
    needs = analysis.catalog_needs([session])
    status = dict(zip(needs["tool"], needs["status"], strict=True))
    assert status == {
        "Mystery": "missing",
        "mcp__db__query": "no description",
        "Grep": "baseline only",
        "Read": "described",
    }
    assert needs["tool"].to_list() == ["Mystery", "mcp__db__query", "Grep", "Read"]
    row = needs.row(needs["tool"].to_list().index("Grep"), named=True)
    assert (row["calls"], row["in_baseline"], row["in_trace_catalog"]) == (2, True, False)
    assert row["description"] == analysis.catalog.baseline_catalog().get("Grep").description

    live = ToolCatalog(tools=[ToolDef(name="Mystery", description="Does a thing.")])
    with_live = analysis.catalog_needs([session], live)
    mystery = with_live.filter(with_live["tool"] == "Mystery").row(0, named=True)
    assert (mystery["status"], mystery["in_live_dump"]) == ("described", True)
    assert mystery["description"] == "Does a thing."


def test_catalog_frame_lists_the_menu():
    baseline = analysis.catalog.baseline_catalog()
    frame = analysis.catalog_frame(baseline)
    assert frame["tool"].to_list() == baseline.names()
    assert set(frame["provenance"]) == {"baseline"}


def test_condition_filter_keeps_input_findings_and_that_condition(loaded):
    _, findings = loaded
    full = analysis.findings.findings_for_condition(findings, "full")
    assert {f.condition for f in full} == {None, "full"}
    dropped = [f for f in findings if f not in full]
    assert dropped
    assert all(f.condition in ("bare", "catalog_no_call") for f in dropped)


def test_ambiguous_turns_are_the_split_votes_with_both_sides(loaded):
    result, _ = loaded
    split = analysis.views.ambiguous_turns(result.sessions, result.judgments)
    expected = sorted(
        {
            (j.session_id, j.turn_index)
            for j in result.judgments
            if j.condition == "full" and j.score is not None and 0 < j.score < 1
        }
    )
    assert list(zip(split["session_id"], split["turn_index"], strict=True)) == expected
    row = split.row(0, named=True)
    assert (row["ask"], row["votes_label"]) == ("yes do #1", "2 of 3 judges")
    judgment = next(
        j
        for j in result.judgments
        if (j.session_id, j.turn_index, j.condition) == (RICH, 3, "full")
    )
    assert row["for_incorrect"] == next(
        v.reasoning for v in judgment.votes if v.verdict == "incorrect"
    )
    assert analysis.views.ambiguous_turns(result.sessions, result.judgments, "bare").is_empty()


def test_review_queue_puts_split_votes_then_failures_first(loaded):
    result, findings = loaded
    queue = analysis.review_queue(result.sessions, result.judgments, findings, limit=None)
    assert queue.height == sum(len(s.turns) for s in result.sessions)
    first = queue.row(0, named=True)
    assert (first["session_id"], first["turn_index"]) == (RICH, 3)
    assert first["reasons"].startswith("split vote (2 of 3 judges)")
    means = turn_means(result.judgments, "full")
    failing = {turn for turn, mean in means.items() if mean == 0}
    assert set(zip(queue["session_id"][1:4], queue["turn_index"][1:4], strict=True)) == failing
    bare_only = {f.code for f in findings if f.condition == "bare" and f.severity == "error"} - {
        f.code for f in findings if f.condition in (None, "full")
    }
    assert bare_only  # a menu of one tool, by design of the ablation...
    assert not any(code in " ".join(queue["reasons"]) for code in bare_only)  # ...is not a reason
    assert analysis.review_queue(result.sessions, result.judgments, findings, limit=3).height == 3


def test_review_queue_without_judgments_ranks_by_findings(loaded):
    result, _ = loaded
    findings = analysis.collect_findings(result.sessions)
    queue = analysis.review_queue(result.sessions, [], findings, limit=None)
    assert set(queue["verdict_kind"]) == {"not judged"}
    errors = queue["errors"].to_list()
    assert errors == sorted(errors, reverse=True)


def test_explain_turns_leads_with_the_most_serious_finding(loaded):
    result, findings = loaded
    retail = next(s for s in result.sessions if s.session_id == RETAIL)
    bare = analysis.explain_turns(retail, result.judgments, findings, "bare")
    assert all(
        "One-tool menu (SINGLE_TOOL_CATALOG): The judge saw a menu of one tool" in why
        for why in bare["why"]
    )
    full = analysis.explain_turns(retail, result.judgments, findings, "full")
    # every turn scored 1.0: the session's warning is the answer to "why 1.0", on each turn
    assert all(
        "Every turn scored alike (UNIFORM_SESSION_SCORES): Every judged turn scored 1.0" in why
        for why in full["why"]
    )
    assert full["score"].to_list() == [1.0, 1.0]


def test_ablation_turns_puts_each_condition_side_by_side(loaded):
    result, _ = loaded
    bad = [s for s in result.sessions if s.session_id == BAD]
    table = analysis.ablation_turns(bad, result.judgments)
    assert table.columns[-3:] == ["bare", "catalog_no_call", "full"]
    for condition in ("bare", "catalog_no_call", "full"):
        means = turn_means(result.judgments, condition)
        assert table[condition].to_list() == [means[BAD, t] for t in table["turn_index"]]
    assert table["full"].to_list() == [1.0, 0.0, 0.0, 0.0]


def test_votes_frame_has_one_row_per_vote(loaded):
    result, _ = loaded
    votes = analysis.votes_frame(result.judgments)
    assert votes.height == sum(len(j.votes) for j in result.judgments)
    split = votes.filter(
        (votes["session_id"] == RICH) & (votes["turn_index"] == 3) & (votes["condition"] == "full")
    )
    assert split["verdict"].to_list() == ["correct", "correct", "incorrect"]
    assert split["judge"].to_list() == [1, 2, 3]
    assert set(votes["step_index"]) == {j.step_index for j in result.judgments}


def test_findings_summary_counts_by_code(loaded):
    _, findings = loaded
    summary = analysis.findings_summary(findings)
    by_code = Counter(f.code for f in findings)
    assert dict(zip(summary["code"], summary["findings"], strict=True)) == dict(by_code)
    order = {"error": 0, "warning": 1, "info": 2}
    ranks = [order[s] for s in summary["severity"]]
    assert ranks == sorted(ranks)
    for row in summary.iter_rows(named=True):
        mine = [f for f in findings if f.code == row["code"]]
        assert row["sessions"] == len({f.session_id for f in mine})
        turns = {(f.session_id, f.turn_index) for f in mine if f.turn_index is not None}
        assert row["turns"] == len(turns)
        steps = {
            (f.session_id, f.turn_index, f.step_index, f.parent_call_id)
            for f in mine
            if f.step_index is not None
        }
        assert row["steps"] == len(steps)
    no_catalog = summary.filter(summary["code"] == "NO_CATALOG").row(0, named=True)
    assert no_catalog["findings"] == no_catalog["sessions"], "said once per session"
    assert analysis.findings_summary([]).is_empty()


SPLIT = ["correct", "correct", "incorrect"]
OUTCOMES = [["correct"] * 3, SPLIT, ["incorrect"] * 3, ["correct", "incorrect", "incorrect"]]


def step_judgment(session_id, step, verdicts, condition="full"):
    votes = [
        Vote(verdict=v, reasoning=f"{v}: step {step.index} of turn {step.turn.index}")
        for v in verdicts
    ]
    return Judgment(
        session_id=session_id,
        turn_index=step.turn.index,
        step_index=step.index,
        message_id=step.message_id,
        parent_call_id=step.parent_call_id,
        score=sum(v.verdict == "correct" for v in votes) / len(votes) if votes else None,
        votes=votes,
        n_requested=3,
        n_valid=len(votes),
        n_discarded=3 - len(votes),
        model="m",
        spec_name="r",
        condition=condition,
        catalog_size=10,
        call_rendered=True,
        context_chars=0,
        unscored_reason=None if votes else "no valid verdict in 3 attempts",
    )


@pytest.fixture(scope="module")
def judged_steps(corpus):
    """Real Claude Code sessions, every tool-calling step judged (subagents' too) under full
    (a rotation of pass, split, fail, split against) and bare (all pass); one step unscored.
    """
    spotter = corpus / "claude-code" / "spotter"
    sessions = analysis.load([spotter / "subagent.jsonl", spotter / "tool_heavy.jsonl"]).sessions
    steps = {
        session.session_id: [
            step for turn in session.turns for step in turn_steps(turn, subagents=True)
        ]
        for session in sessions
    }
    judgments = []
    for session_id, session_steps in steps.items():
        for n, step in enumerate(session_steps):
            verdicts = [] if n == 3 else OUTCOMES[n % len(OUTCOMES)]
            judgments.append(step_judgment(session_id, step, verdicts))
            judgments.append(step_judgment(session_id, step, ["correct"] * 3, "bare"))
    return sessions, steps, judgments


def _where(row):
    return (row["session_id"], row["turn_index"], row["step_index"], row["parent_call_id"])


def _key(j):
    return (j.session_id, j.turn_index, j.step_index, j.parent_call_id)


def test_ambiguous_steps_are_the_split_steps_with_their_calls(judged_steps):
    sessions, steps, judgments = judged_steps
    split = ambiguous_steps(sessions, judgments)
    expected = [
        j for j in judgments if j.condition == "full" and j.score is not None and 0 < j.score < 1
    ]
    assert split.height == len(expected)
    assert {_where(row) for row in split.iter_rows(named=True)} == {_key(j) for j in expected}
    assert any(row["parent_call_id"] for row in split.iter_rows(named=True)), "a subagent's step"
    by_key = {
        (session_id, step.turn.index, step.index, step.parent_call_id): step
        for session_id, session_steps in steps.items()
        for step in session_steps
    }
    judged = {_key(j): j for j in expected}
    for row in split.iter_rows(named=True):
        step, judgment = by_key[_where(row)], judged[_where(row)]
        assert row["ask"] == step.turn.ask
        assert row["tools"] == list(dict.fromkeys(c.name for c in step.message.tool_calls))
        assert row["calls"] == [render_call(c) for c in step.message.tool_calls]
        correct = sum(v.verdict == "correct" for v in judgment.votes)
        assert row["votes_label"] == f"{correct} of {len(judgment.votes)} judges"
        assert row["for_correct"].startswith("correct: ")
        assert row["for_incorrect"] == f"incorrect: step {step.index} of turn {step.turn.index}"
    assert ambiguous_steps(sessions, judgments, "bare").is_empty()


def test_worst_steps_are_the_lowest_scoring_of_each_session(judged_steps):
    sessions, steps, judgments = judged_steps
    worst = worst_steps(sessions, judgments, per_session=3)
    for session in sessions:
        mine = worst.filter(worst["session_id"] == session.session_id)
        below = sorted(
            j.score
            for j in judgments
            if j.session_id == session.session_id
            and j.condition == "full"
            and j.score is not None
            and j.score < 1
        )
        assert mine["score"].to_list() == below[:3]
        for row in mine.iter_rows(named=True):
            step = next(
                s
                for s in steps[session.session_id]
                if (s.turn.index, s.index, s.parent_call_id)
                == (row["turn_index"], row["step_index"], row["parent_call_id"])
            )
            assert row["calls"] == [render_call(c) for c in step.message.tool_calls]
            assert row["for_incorrect"] == f"incorrect: step {step.index} of turn {step.turn.index}"
    assert worst.height == 5  # 3 of the long session, and the short one's 2 below 1
    assert worst_steps(sessions, judgments, "bare").is_empty(), "every bare step passed"
    assert worst_steps(sessions, judgments, per_session=1).height == 2


def test_ablation_steps_puts_each_condition_side_by_side(judged_steps):
    sessions, steps, judgments = judged_steps
    table = ablation_steps(sessions, judgments)
    assert table.height == sum(len(s) for s in steps.values())
    assert table.columns[-3:] == ["bare", "catalog_no_call", "full"]
    scores = {(_key(j), j.condition): j.score for j in judgments}
    for row in table.iter_rows(named=True):
        assert row["full"] == scores[_where(row), "full"]
        assert row["bare"] == 1.0
        assert row["catalog_no_call"] is None


def test_turn_views_take_a_turns_score_as_the_mean_of_its_steps(judged_steps):
    sessions, _, judgments = judged_steps
    findings = analysis.collect_findings(sessions, judgments)
    overview = analysis.views.turns_overview(sessions, judgments, findings)
    means = turn_means(judgments, "full")
    judged = [row for row in overview.iter_rows(named=True) if row["verdict_kind"] != "not judged"]
    assert {(r["session_id"], r["turn_index"]): r["score"] for r in judged} == pytest.approx(means)
    for row in judged:
        mine = [
            j
            for j in judgments
            if (j.session_id, j.turn_index, j.condition)
            == (row["session_id"], row["turn_index"], "full")
        ]
        assert row["steps"] == len(mine)
        assert row["split_steps"] == sum(1 for j in mine if j.score and 0 < j.score < 1)
        assert "NO_CATALOG" in row["findings"], "the session's catalog finding holds for each turn"
    assert overview.filter(overview["verdict_kind"] == "not judged")["tools"].to_list() == [[]]

    queue = analysis.review_queue(sessions, judgments, findings, limit=None)
    first = queue.row(0, named=True)
    assert first["verdict_kind"] == "split"
    row = next(
        r
        for r in judged
        if (r["session_id"], r["turn_index"]) == (first["session_id"], first["turn_index"])
    )
    assert first["reasons"].startswith(
        f"split vote at {row['split_steps']} of {row['steps']} steps"
    )

    split_turns = analysis.views.ambiguous_turns(sessions, judgments)
    assert set(zip(split_turns["session_id"], split_turns["turn_index"], strict=True)) == {
        (j.session_id, j.turn_index)
        for j in judgments
        if j.condition == "full" and j.score and 0 < j.score < 1
    }

    ablation = analysis.ablation_turns(sessions, judgments)
    for row in ablation.iter_rows(named=True):
        assert row["full"] == pytest.approx(means.get((row["session_id"], row["turn_index"])))


def test_explain_turns_explains_a_turn_by_its_worst_step(judged_steps):
    sessions, _, judgments = judged_steps
    session = next(s for s in sessions if len(s.turns) == 2)  # spotter/subagent.jsonl
    findings = analysis.collect_findings(sessions, judgments)
    for condition, votes, reason in (
        ("full", "0 of 3", "No finding: "),  # no catalog on the input is not why it scored so
        (
            "bare",
            "3 of 3",
            "Every turn scored alike (UNIFORM_SESSION_SCORES): Every judged turn scored 1.0",
        ),  # the why
    ):
        explained = analysis.explain_turns(session, judgments, findings, condition)
        for row in explained.iter_rows(named=True):
            mine = [
                j
                for j in judgments
                if (j.session_id, j.turn_index, j.condition)
                == (session.session_id, row["turn_index"], condition)
            ]
            lowest = min((j.score, j.step_index) for j in mine if j.score is not None)
            worst = [j for j in mine if (j.score, j.step_index) == lowest]  # a tie: either
            assert any(
                row["why"].startswith(
                    f"worst of {len(mine)} steps, step {j.step_index}"
                    + (f" of the subagent of call {j.parent_call_id}" if j.parent_call_id else "")
                    + f": {votes} judges said correct. {reason}"
                )
                for j in worst
            ), row["why"]
