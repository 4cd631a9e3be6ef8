"""Conformance over real third-party transcripts in ../shared/corpus.

Every expected number is counted here from the raw lines with the plainest rule that fits the
format's documentation, never taken from the parser's output.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import analysis

NOT_TURN_PREFIXES = (
    "[Request interrupted",
    "<local-command-",
    "<task-notification>",
    "<bash-",
)


def raw_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def user_text(record: dict) -> str | None:
    """The typed text of a user record, or None when it only carries tool results."""
    content = record["message"]["content"]
    if isinstance(content, str):
        return content
    if any(block.get("type") == "tool_result" for block in content):
        return None
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def expected_turns(records: list[dict]) -> int:
    command_uuids = set()
    turns = 0
    for record in records:
        if record.get("type") != "user" or record.get("isSidechain"):
            continue
        value = user_text(record)
        if value is None or record.get("isCompactSummary"):
            continue
        if record.get("parentUuid") in command_uuids:  # a slash command's expansion
            continue
        if record.get("isMeta") or value.lstrip().startswith(NOT_TURN_PREFIXES):
            continue
        if "<command-name>" in value:
            command_uuids.add(record["uuid"])
        turns += 1
    return turns


def tool_uses(records: list[dict]) -> dict[str, str]:
    """tool_use id -> name, over assistant records."""
    found = {}
    for record in records:
        if record.get("type") != "assistant":
            continue
        for block in record["message"]["content"]:
            if block.get("type") == "tool_use":
                found[block["id"]] = block["name"]
    return found


def expected_counts(path: Path) -> tuple[int, Counter, Counter]:
    records = raw_records(path)
    main = [r for r in records if not r.get("isSidechain")]
    sidechain = [r for r in records if r.get("isSidechain")]
    subagent = tool_uses(sidechain)
    files = sorted((path.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    file_agents = {f.stem.removeprefix("agent-") for f in files}
    for file in files:
        subagent.update(tool_uses(raw_records(file)))
    for record in records:
        data = record.get("data") or {}
        if (
            record["type"] == "progress"
            and data.get("type") == "agent_progress"
            and data.get("agentId") not in file_agents
        ):
            subagent.update(tool_uses([data["message"]]))
    return expected_turns(main), Counter(tool_uses(main).values()), Counter(subagent.values())


def claude_files(corpus: Path) -> list[Path]:
    return sorted(
        p for p in (corpus / "claude-code").rglob("*.jsonl") if p.parent.name != "subagents"
    )


def test_every_claude_code_transcript_matches_raw_counts(corpus):
    files = claude_files(corpus)
    assert len(files) == 7
    for path in files:
        (session,) = analysis.load([path]).sessions
        turns, calls, subagent_calls = expected_counts(path)
        assert len(session.turns) == turns, path.name
        assert Counter(session.tool_call_counts()) == calls, path.name
        assert Counter(session.subagent_tool_call_counts()) == subagent_calls, path.name
        assert session.issues == [], path.name


def test_formats_are_told_apart(corpus):
    loaded = analysis.load([corpus / "claude-code"])
    formats = {Path(s.source).parent.name: s.format for s in loaded.sessions}
    assert formats == {"claude-code-viewer": "claude-code-legacy", "spotter": "claude-code"}


def test_parallel_calls_match_message_ids(corpus):
    path = corpus / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    per_message = Counter()
    for record in raw_records(path):
        if record["type"] == "assistant" and not record.get("isSidechain"):
            uses = [b for b in record["message"]["content"] if b.get("type") == "tool_use"]
            per_message[record["message"]["id"]] += len(uses)
    (session,) = analysis.load([path]).sessions
    parsed = {m.id: len(m.tool_calls) for t in session.turns for m in t.messages}
    assert parsed == dict(per_message)
    assert max(parsed.values()) > 1  # this session does make parallel calls


def test_every_result_is_paired_with_its_call(corpus):
    path = corpus / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    results = {}
    for record in raw_records(path):
        if record["type"] == "user" and isinstance(record["message"]["content"], list):
            for block in record["message"]["content"]:
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block.get("is_error") is True
    (session,) = analysis.load([path]).sessions
    paired = {c.id: c.result.is_error for c in session.tool_calls() if c.result is not None}
    assert paired == {k: v for k, v in results.items() if k in paired}
    assert set(paired) == set(results) & {c.id for c in session.tool_calls()}
    assert any(paired.values())  # some results in this session are errors


def reported_tool_use_count(path: Path, call_id: str) -> int:
    """What Claude Code itself recorded for a Task call: ``toolUseResult.totalToolUseCount``."""
    for record in raw_records(path):
        content = record.get("message", {}).get("content")
        if (
            record["type"] == "user"
            and isinstance(content, list)
            and any(block.get("tool_use_id") == call_id for block in content)
        ):
            return record["toolUseResult"]["totalToolUseCount"]
    raise AssertionError(f"no result for {call_id}")


@pytest.mark.parametrize(
    ("name", "source"),
    [("258c7280-ae70-4798-800f-63464d01a85d.jsonl", "file"), ("subagent.jsonl", "progress")],
)
def test_subagent_calls_match_what_claude_code_reported_and_count_once(corpus, name, source):
    # The first session has the subagent both in its own file and in agent_progress records.
    path = corpus / "claude-code" / "spotter" / name
    (session,) = analysis.load([path]).sessions
    task = next(c for c in session.tool_calls() if c.name == "Task")
    assert task.subagent is not None
    assert task.subagent.source == source
    reported = reported_tool_use_count(path, task.id)
    assert sum(1 for _ in task.subagent.tool_calls()) == reported


def test_directory_load_does_not_treat_subagent_files_as_sessions(corpus):
    loaded = analysis.load([corpus / "claude-code"])
    assert len(loaded.sessions) == 7
    assert loaded.issues == []


@pytest.fixture(scope="module")
def tau(corpus):
    return corpus / "tau-bench"


def test_tau_bench_trajectories(tau):
    raw = json.loads((tau / "gpt-4o-airline.json").read_text())
    tools = json.loads((tau / "airline-tools.json").read_text())
    loaded = analysis.load([tau])
    assert len(loaded.sessions) == len(raw) == 200
    assert loaded.all_issues() == []
    for item, session in zip(raw, loaded.sessions, strict=True):
        messages = item["traj"]
        assert session.metadata["reward"] == item["reward"]
        assert len(session.turns) == sum(1 for m in messages if m["role"] == "user")
        expected = Counter(
            call["function"]["name"] for m in messages for call in (m.get("tool_calls") or [])
        )
        assert Counter(session.tool_call_counts()) == expected
        replies = sum(1 for m in messages if m["role"] == "tool")
        assert sum(1 for c in session.tool_calls() if c.result is not None) == replies
        catalogs = {id(session.catalog_for(turn)) for turn in session.turns}
        assert len(catalogs) == 1
        catalog = session.catalog_for(session.turns[0])
        assert catalog is not None
        assert catalog.names() == [t["function"]["name"] for t in tools]


def test_tau_bench_catalog_keeps_descriptions_and_schemas(tau):
    tools = json.loads((tau / "airline-tools.json").read_text())
    catalog, issues = analysis.ingest.load_catalog(tau / "airline-tools.json")
    assert issues == []
    assert catalog is not None
    for tool, raw in zip(catalog.tools, tools, strict=True):
        assert tool.description == raw["function"]["description"]
        assert tool.parameters == raw["function"]["parameters"]
