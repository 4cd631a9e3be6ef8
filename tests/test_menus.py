"""The menu a Claude Code session is judged against when it carries none: the built-in tools
of its version, the live dump, and the tools it was seen calling. Called tools are counted
from the raw transcript lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLAUDE_CODE_TRANSCRIPTS, CORPUS, tsq

import analysis


def called_tools(path: Path) -> set[str]:
    """Every tool a transcript's records call, its subagent files' included."""
    files = [path, *sorted((path.with_suffix("") / "subagents").glob("agent-*.jsonl"))]
    names = set()
    for file in files:
        for line in file.read_text().splitlines():
            record = json.loads(line)
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if record.get("type") == "assistant" and isinstance(content, list):
                names |= {b["name"] for b in content if b.get("type") == "tool_use"}
    return names


@pytest.mark.parametrize("path", CLAUDE_CODE_TRANSCRIPTS, ids=lambda p: p.name)
def test_every_tool_a_session_called_is_on_its_menu_with_a_description(claude_code_sessions, path):
    session = claude_code_sessions[path.name]
    called = called_tools(path)
    for turn in session.turns:
        choice = analysis.catalog_for_turn(session, turn)
        assert choice.basis.startswith("version")
        for name in called:
            tool = choice.catalog.get(name)
            assert tool is not None, (name, turn.index)
            assert tool.description, name
            assert tool.provenance in ("baseline", "version"), name  # all built-ins here
            if tool.provenance == "version":
                assert tool.since is not None


def test_a_called_mcp_tool_is_on_the_menu_as_observed(tmp_path):
    source = CORPUS / "claude-code" / "spotter" / "short.jsonl"
    if not source.exists():
        pytest.skip("../shared/corpus is not there")
    lines = source.read_text().splitlines()
    last = json.loads(next(line for line in reversed(lines) if '"assistant"' in line))
    call = {
        "type": "tool_use",
        "id": "toolu_mcp_1",
        "name": "mcp__github__create_issue",
        "input": {"repo": "o/r", "title": "Flaky test", "labels": ["ci"]},
    }
    last.update(uuid="mcp-line", message={**last["message"], "id": "msg_mcp", "content": [call]})
    path = tmp_path / "with-mcp.jsonl"
    path.write_text("\n".join([*lines, json.dumps(last)]) + "\n")
    (session,) = analysis.load([path]).sessions
    assert "mcp__github__create_issue" in called_tools(path)
    choice = analysis.catalog_for_turn(session, session.turns[-1])
    tool = choice.catalog.get("mcp__github__create_issue")
    assert tool is not None
    assert tool.provenance == "observed"
    assert "MCP tool 'create_issue' of the 'github' server" in tool.description
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "repo": {"type": "string"},
            "title": {"type": "string"},
            "labels": {"type": "array"},
        },
        "required": ["repo", "title", "labels"],
    }
    assert choice.basis == "version+observed"
    assert "1 tool seen in its calls (mcp__github__create_issue)" in choice.note
    step = analysis.turn_steps(session.turns[-1])[-1]
    rendered = analysis.render_step(session, session.turns[-1], step.index)
    assert "- mcp__github__create_issue: MCP tool 'create_issue'" in rendered.menu_text()
    findings = analysis.collect_findings([session])
    assert not [f for f in findings if "NOT_IN_CATALOG" in f.code or "MISSING" in f.code]


def test_a_version_between_examined_ones_says_which_it_used(claude_code_sessions):
    session = claude_code_sessions["short.jsonl"]
    turn = session.turns[0]
    used = analysis.catalog.nearest_examined(turn.agent_version)
    choice = analysis.catalog_for_turn(session, turn)
    assert turn.agent_version == "2.1.38"
    assert f"Claude Code {used}'s built-in tools" in choice.note
    if used != turn.agent_version:
        assert f"the nearest known version at or below {turn.agent_version}" in choice.note


def test_an_unknown_version_falls_back_to_the_baseline(claude_code_sessions):
    path = CORPUS / "claude-code" / "spotter" / "subagent.jsonl"
    session = claude_code_sessions[path.name].model_copy(deep=True)
    session.agent_version = None
    for turn in session.turns:
        turn.agent_version = None
    choice = analysis.catalog_for_turn(session, session.turns[0])
    assert choice.basis == "baseline"
    assert choice.catalog.names() == analysis.catalog.baseline_catalog().names()
    absent = [name for name in called_tools(path) if name not in choice.catalog.names()]
    assert absent  # AskUserQuestion, ExitPlanMode: not among the baseline's ten
    (missing,) = [
        f
        for f in analysis.collect_findings([session])
        if f.code == "USED_TOOLS_MISSING_FROM_CATALOG"
    ]
    assert sorted(missing.message.split(": ", 1)[1].rstrip(".").split(", ")) == sorted(absent)


def test_lint_on_plain_transcripts_says_no_catalog_once_at_info():
    done = tsq("lint", str(CORPUS / "claude-code"), "--json")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)["findings"]
    no_catalog = [f for f in findings if f["code"] == "NO_CATALOG"]
    sessions = {f["session_id"] for f in no_catalog}
    assert len(no_catalog) == len(sessions) == len(CLAUDE_CODE_TRANSCRIPTS)
    assert {f["severity"] for f in no_catalog} == {"info"}
    assert {f["turn_index"] for f in no_catalog} == {None}
    assert all(f["condition"] is None for f in no_catalog)
    # every called tool is on the judge's menu (version built-ins), so none is reported missing
    assert not [
        f
        for f in findings
        if f["code"] in ("USED_TOOLS_MISSING_FROM_CATALOG", "CALLED_TOOL_NOT_IN_CATALOG")
    ]
