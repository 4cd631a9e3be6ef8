"""Codex rollouts: the two real ones in the corpus (Codex CLI 0.125.0, Codex Desktop
0.128.0-alpha.1), counted here from their raw lines, and bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import CORPUS

import analysis

ROLLOUTS = sorted((CORPUS / "codex" / "codemie-code").glob("rollout-*.jsonl"))
CALLS = {"function_call", "custom_tool_call", "web_search_call", "local_shell_call"}
OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}

pytestmark = pytest.mark.skipif(not ROLLOUTS, reason="../shared/corpus is not beside this checkout")


def raw_counts(path: Path) -> dict:
    """Turns (user_message events), steps (runs of assistant items holding calls, ended by an
    output, a token count or a user message) and calls by tool, from the lines themselves."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    turns, steps, open_step = 0, 0, False
    calls: Counter[str] = Counter()
    for record in records:
        payload = record["payload"]
        kind = payload.get("type")
        if record["type"] == "event_msg" and kind == "user_message":
            turns += 1
            open_step = False
        elif (record["type"], kind) == ("event_msg", "token_count") or kind in OUTPUTS:
            open_step = False  # the response ended: its calls' outputs, or its token count
        elif record["type"] == "response_item" and kind in CALLS:
            name = "web_search" if kind == "web_search_call" else payload["name"]
            calls[payload.get("namespace", "") + name] += 1
            if not open_step:
                steps += 1
                open_step = True
    return {"turns": turns, "steps": steps, "calls": dict(calls)}


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:28])
def test_a_rollout_reads_as_its_lines_count_it(path):
    result = analysis.load([path])
    assert result.all_issues() == []
    (session,) = result.sessions
    expected = raw_counts(path)
    meta = json.loads(path.read_text().splitlines()[0])["payload"]
    assert (session.format, session.session_id) == ("codex", meta["id"])
    assert (session.agent_version, session.cwd) == (meta["cli_version"], meta["cwd"])
    assert session.metadata["originator"] == meta["originator"]
    assert session.system_prompt == meta["base_instructions"]["text"]
    assert len(session.turns) == expected["turns"]
    steps = sum(1 for turn in session.turns for message in turn.messages if message.tool_calls)
    assert steps == expected["steps"]
    assert session.tool_call_counts() == expected["calls"]


def test_exit_codes_mark_failed_calls_and_outputs_pair_by_call_id():
    path = ROLLOUTS[0]
    records = [json.loads(line)["payload"] for line in path.read_text().splitlines()]
    failed = {
        r["call_id"] for r in records if r.get("type") == "exec_command_end" and r["exit_code"]
    }
    outputs = {
        r["call_id"]: r["output"] for r in records if r.get("type") == "function_call_output"
    }
    (session,) = analysis.load([path]).sessions
    calls = {call.id: call for call in session.tool_calls()}
    assert {i for i, call in calls.items() if call.result and call.result.is_error} == failed
    for call_id, output in outputs.items():
        assert calls[call_id].result.content == output[:4000]
    patch = next(call for call in calls.values() if call.name == "apply_patch")
    assert patch.input["input"].startswith("*** Begin Patch")


def test_bad_lines_are_issues_on_their_line_and_the_rest_loads(tmp_path):
    lines = ROLLOUTS[1].read_text().splitlines()
    call = next(i for i, line in enumerate(lines) if '"function_call"' in line)
    record = json.loads(lines[call])
    record["payload"]["arguments"] = '{"cmd": "ls'  # cut short
    lines[call] = json.dumps(record)
    lines.insert(2, "[1, 2]")
    lines.insert(3, '{"timestamp": "2026-05-11T10:29:41.000Z", "type": "response_item", "paylo')
    stray = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}
    lines.insert(
        4,
        json.dumps(
            {"timestamp": "2026-05-11T10:29:41Z", "type": "response_item", "payload": stray}
        ),
    )
    bad = tmp_path / ROLLOUTS[1].name
    bad.write_text("\n".join(lines) + "\n")
    result = analysis.load([bad])
    (session,) = result.sessions
    issues = {issue.line: issue.reason for issue in result.all_issues()}
    assert set(issues) == {3, 4, 5, call + 4}
    assert all(str(bad) == issue.file for issue in result.all_issues())
    assert "not valid JSON" in issues[call + 4]
    assert sum(session.tool_call_counts().values()) == sum(
        raw_counts(ROLLOUTS[1])["calls"].values()
    )
    kept = next(c for c in session.tool_calls() if c.line == call + 4)
    assert kept.input == {"arguments": '{"cmd": "ls'}
