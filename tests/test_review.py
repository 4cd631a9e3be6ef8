"""Views across sessions for review: usage, catalog needs, split votes, the review queue."""

from __future__ import annotations

from collections import Counter

import analysis
from analysis import AssistantMessage, Session, ToolCall, ToolCatalog, ToolDef, Turn

BAD = "5eed0000-0000-4000-8000-000000000001"
RICH = "5eed0000-0000-4000-8000-000000000002"
RETAIL = "retail.synthetic/task0-trial0"


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
    assert row["description"] == analysis.baseline_catalog().get("Grep").description

    live = ToolCatalog(tools=[ToolDef(name="Mystery", description="Does a thing.")])
    with_live = analysis.catalog_needs([session], live)
    mystery = with_live.filter(with_live["tool"] == "Mystery").row(0, named=True)
    assert (mystery["status"], mystery["in_live_dump"]) == ("described", True)
    assert mystery["description"] == "Does a thing."


def test_catalog_frame_lists_the_menu():
    baseline = analysis.baseline_catalog()
    frame = analysis.catalog_frame(baseline)
    assert frame["tool"].to_list() == baseline.names()
    assert set(frame["provenance"]) == {"baseline"}


def test_condition_filter_keeps_input_findings_and_that_condition(loaded):
    _, findings = loaded
    full = analysis.findings_for_condition(findings, "full")
    assert {analysis.condition_of(f) for f in full} == {None, "full"}
    dropped = [f for f in findings if f not in full]
    assert dropped
    assert all(f.message.startswith(("[bare] ", "[catalog_no_call] ")) for f in dropped)


def test_ambiguous_turns_are_the_split_votes_with_both_sides(loaded):
    result, _ = loaded
    split = analysis.ambiguous_turns(result.sessions, result.judgments)
    expected = sorted(
        (j.session_id, j.turn_index)
        for j in result.judgments
        if j.condition == "full" and j.score is not None and 0 < j.score < 1
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
    assert analysis.ambiguous_turns(result.sessions, result.judgments, "bare").is_empty()


def test_review_queue_puts_split_votes_then_failures_first(loaded):
    result, findings = loaded
    queue = analysis.review_queue(result.sessions, result.judgments, findings, limit=None)
    assert queue.height == sum(len(s.turns) for s in result.sessions)
    first = queue.row(0, named=True)
    assert (first["session_id"], first["turn_index"]) == (RICH, 3)
    assert first["reasons"].startswith("split vote (2 of 3 judges)")
    failing = {
        (j.session_id, j.turn_index)
        for j in result.judgments
        if j.condition == "full" and j.score == 0
    }
    assert set(zip(queue["session_id"][1:4], queue["turn_index"][1:4], strict=True)) == failing
    assert "[bare]" not in " ".join(queue["reasons"])
    assert analysis.review_queue(result.sessions, result.judgments, findings, limit=3).height == 3


def test_review_queue_without_judgments_ranks_by_findings(loaded):
    result, _ = loaded
    findings = analysis.lint(result.sessions)
    queue = analysis.review_queue(result.sessions, [], findings, limit=None)
    assert set(queue["verdict_kind"]) == {"not judged"}
    errors = queue["errors"].to_list()
    assert errors == sorted(errors, reverse=True)


def test_explain_turns_leads_with_the_most_serious_finding(loaded):
    result, findings = loaded
    retail = next(s for s in result.sessions if s.session_id == RETAIL)
    bare = analysis.explain_turns(retail, result.judgments, findings, "bare")
    assert all(why.startswith("SINGLE_TOOL_CATALOG") for why in bare["why"])
    full = analysis.explain_turns(retail, result.judgments, findings, "full")
    assert all(why.startswith("No finding") for why in full["why"])
    assert full["score"].to_list() == [1.0, 1.0]


def test_ablation_turns_puts_each_condition_side_by_side(loaded):
    result, _ = loaded
    bad = [s for s in result.sessions if s.session_id == BAD]
    table = analysis.ablation_turns(bad, result.judgments)
    assert table.columns[-3:] == ["bare", "catalog_no_call", "full"]
    for row in table.iter_rows(named=True):
        for condition in ("bare", "catalog_no_call", "full"):
            judged = next(
                j
                for j in result.judgments
                if (j.session_id, j.turn_index, j.condition) == (BAD, row["turn_index"], condition)
            )
            assert row[condition] == judged.score
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


def test_findings_summary_counts_by_code(loaded):
    _, findings = loaded
    summary = analysis.findings_summary(findings)
    by_code = Counter(f.code for f in findings)
    assert dict(zip(summary["code"], summary["findings"], strict=True)) == dict(by_code)
    order = {"error": 0, "warning": 1, "info": 2}
    ranks = [order[s] for s in summary["severity"]]
    assert ranks == sorted(ranks)
    no_catalog = summary.filter(summary["code"] == "NO_CATALOG").row(0, named=True)
    affected = {(f.session_id, f.turn_index) for f in findings if f.code == "NO_CATALOG"}
    assert no_catalog["turns"] == len(affected)
    assert no_catalog["sessions"] == len({s for s, _ in affected})
    assert analysis.findings_summary([]).is_empty()
