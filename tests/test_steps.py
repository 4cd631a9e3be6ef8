"""Steps on real sessions: one judged unit per model response that called a tool.

Expected counts and call names come from the raw transcript lines, never from the loader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CLAUDE_CODE_TRANSCRIPTS, CORPUS

import analysis

OUTPUT_HEADING = "## Model output (the step being judged)\n"


def tool_uses_by_response(path: Path) -> dict[str, list[str]]:
    """Main-chain model responses with at least one tool_use block: id -> tool names."""
    responses: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record["message"]
        content = message.get("content")
        names = [
            block["name"]
            for block in (content if isinstance(content, list) else [])
            if block.get("type") == "tool_use"
        ]
        if names:
            responses.setdefault(message["id"], []).extend(names)
    return responses


@pytest.mark.parametrize("path", CLAUDE_CODE_TRANSCRIPTS, ids=lambda p: p.name)
def test_one_step_per_tool_calling_response(claude_code_sessions, path):
    session = claude_code_sessions[path.name]
    expected = tool_uses_by_response(path)
    units = analysis.judge_inputs([session])
    assert [u.message_id for u in units] == list(expected)
    budget = analysis.render.RenderOptions().step_chars
    known = {name for names in expected.values() for name in names}
    for unit in units:
        text = unit.unit_text()
        assert len(text) <= budget
        output = text.split(OUTPUT_HEADING, 1)[1].split("\n## Cut to fit\n", 1)[0]
        called = re.findall(r"^(\w+)\(", output, re.MULTILINE)
        assert [name for name in called if name in known] == expected[unit.message_id]


def test_subagent_steps_sit_under_the_spawning_call(claude_code_sessions):
    session = claude_code_sessions["258c7280-ae70-4798-800f-63464d01a85d.jsonl"]
    folder = CORPUS / "claude-code" / "spotter" / session.session_id
    subagent_file = folder / "subagents" / "agent-a881341.jsonl"
    expected = {
        json.loads(line)["message"]["id"]
        for line in subagent_file.read_text().splitlines()
        if json.loads(line).get("type") == "assistant"
        and any(
            block.get("type") == "tool_use"
            for block in json.loads(line)["message"]["content"]
            if isinstance(block, dict)
        )
    }
    units = analysis.judge_inputs([session], subagents=True)
    nested = [u for u in units if u.parent_call_id is not None]
    assert {u.message_id for u in nested} == expected
    for unit in nested:
        spawner = next(c for c in session.tool_calls() if c.id == unit.parent_call_id)
        assert spawner.name in ("Task", "Agent")
        assert unit.ask.startswith("(a subagent, spawned by ")
        assert unit.prior_context == ""
        assert len(unit.unit_text()) <= analysis.render.RenderOptions().step_chars


def test_a_long_turn_keeps_the_newest_steps_and_says_what_it_cut(claude_code_sessions):
    session = claude_code_sessions["258c7280-ae70-4798-800f-63464d01a85d.jsonl"]
    turn = max(session.turns, key=lambda t: len(t.messages))
    last = len(turn.messages) - 1
    while not turn.messages[last].tool_calls:
        last -= 1
    unit = analysis.render_step(session, turn, last)
    assert f"[step {last - 1}]" in unit.trajectory  # the step just before is always there
    left_out = re.search(r"\((\d+) earlier steps left out\)", unit.trajectory)
    assert left_out is not None
    shown = len(re.findall(r"^\[step \d+\]", unit.trajectory, re.MULTILINE))
    assert int(left_out.group(1)) + shown == last
    assert any("earlier steps of this turn left out" in cut for cut in unit.cuts)
    assert "## Cut to fit" in unit.unit_text()
    whole_turn = analysis.render_turn(session, turn).prompt_text()
    assert len(whole_turn) > 3 * len(unit.unit_text())


@pytest.mark.parametrize("budget", [2000, 3000, 6000])
def test_any_budget_holds_and_the_newest_earlier_step_stays(claude_code_sessions, budget):
    session = claude_code_sessions["258c7280-ae70-4798-800f-63464d01a85d.jsonl"]
    options = analysis.render.RenderOptions(step_chars=budget)
    for turn in session.turns:
        for step in analysis.turn_steps(turn)[1:]:
            unit = analysis.render_step(session, turn, step.index, options=options)
            assert len(unit.unit_text()) <= budget
            assert f"[step {step.index - 1}]" in unit.trajectory


def test_a_step_that_is_not_there_is_a_clear_error(claude_code_sessions):
    session = claude_code_sessions["short.jsonl"]
    with pytest.raises(ValueError, match="turn 0 has no step 99"):
        analysis.render_step(session, session.turns[0], 99)


def text_responses(path: Path) -> set[str]:
    """Main-chain responses with some text: the candidates of ``--text-steps``."""
    found = set()
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        content = record["message"].get("content")
        blocks = content if isinstance(content, list) else []
        if (isinstance(content, str) and content.strip()) or any(
            b.get("type") == "text" and b.get("text", "").strip() for b in blocks
        ):
            found.add(record["message"]["id"])
    return found


def test_text_steps_add_the_responses_that_called_no_tool(claude_code_sessions):
    text_only_steps = 0
    for path in CLAUDE_CODE_TRANSCRIPTS:
        calling = tool_uses_by_response(path)
        wanted = calling.keys() | text_responses(path)
        units = analysis.judge_inputs([claude_code_sessions[path.name]], text_steps=True)
        assert {u.message_id for u in units} == wanted, path.name
        text_only = [u for u in units if u.message_id not in calling]
        assert all(not u.rendered_calls and not u.call_rendered for u in text_only)
        text_only_steps += len(text_only)
    assert text_only_steps > 0
