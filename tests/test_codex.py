"""Codex rollouts: the two real ones in the corpus (Codex CLI 0.125.0, Codex Desktop
0.128.0-alpha.1), counted here from their raw lines, and bad input."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import CORPUS, tsq
from fake_anthropic import prompt_of

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


def _tsq(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return tsq(*args, env=env)


def test_both_agents_load_side_by_side_and_say_which_wrote_each():
    claude = CORPUS / "claude-code" / "spotter"
    result = analysis.load([claude, CORPUS / "codex"])
    formats = Counter(session.format for session in result.sessions)
    assert formats["codex"] == len(ROLLOUTS)
    assert formats["claude-code"] == len(analysis.load([claude]).sessions)


@pytest.mark.slow
def test_judge_lint_and_report_work_on_rollouts(tmp_path):
    """The first step after each ask, judged through the real SDK against the loopback server;
    lint finds no called built-in missing from the menus; the report names both sessions."""
    from fake_anthropic import API_KEY, FakeAnthropic

    out = tmp_path / "codex.judgments.jsonl"
    with FakeAnthropic() as fake:
        done = _tsq(
            "judge", *map(str, ROLLOUTS), "--model", "claude-judge-4-5", "--base-url", fake.url,
            "--steps", "first", "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
            "--index", str(tmp_path / "index.duckdb"),
            env={"ANTHROPIC_API_KEY": API_KEY},
        )  # fmt: skip
        prompts = [prompt_of(body) for body in fake.script.messages]
    assert done.returncode == 0, done.stderr
    judged = [json.loads(line) for line in out.read_text().splitlines()]
    sessions = analysis.load(ROLLOUTS).sessions
    firsts = {
        (s.session_id, t.index)
        for s in sessions
        for t in s.turns
        if any(m.tool_calls for m in t.messages)
    }
    assert {(j["session_id"], j["turn_index"]) for j in judged} == firsts
    assert all(j["score"] is not None for j in judged)
    assert all("exec_command" in prompt and "apply_patch" in prompt for prompt in prompts)
    assert not any("- Read:" in prompt for prompt in prompts)  # Codex's menu, not Claude Code's

    findings = analysis.collect_findings(sessions)
    assert not [f for f in findings if f.code == "CALLED_TOOL_NOT_IN_CATALOG"]
    html = analysis.build_report(analysis.load(ROLLOUTS), analysis.load([out]).judgments)
    assert all(session.session_id[:8] in html for session in sessions)


def test_export_names_the_agent_and_provider_and_reads_back_as_codex(tmp_path):
    out = tmp_path / "codex.otlp.json"
    done = _tsq("export", *map(str, ROLLOUTS), "--out", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    attributes = [
        {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    chats = [a for a in attributes if a.get("gen_ai.operation.name") == "chat"]
    roots = [a for a in attributes if a.get("gen_ai.operation.name") == "invoke_agent"]
    assert {a["gen_ai.provider.name"] for a in chats} == {"openai"}
    assert {a["gen_ai.agent.name"] for a in roots} == {"codex"}
    again = analysis.load([out])
    assert {s.format for s in again.sessions} == {"codex"}
    assert [len(s.turns) for s in again.sessions] == [
        len(s.turns) for s in analysis.load(ROLLOUTS).sessions
    ]


def test_send_removes_a_secret_from_a_rollout(tmp_path):
    from otlp_receiver import Receiver

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    lines = ROLLOUTS[1].read_text().splitlines()
    call = next(i for i, line in enumerate(lines) if '"function_call"' in line)
    record = json.loads(lines[call])
    record["payload"]["arguments"] = json.dumps({"cmd": f"git push https://{secret}@github.com/x"})
    lines[call] = json.dumps(record)
    leaky = tmp_path / ROLLOUTS[1].name
    leaky.write_text("\n".join(lines) + "\n")
    with Receiver() as receiver:
        done = _tsq("send", str(leaky), "--endpoint", receiver.url, "--yes")
        assert done.returncode == 0, done.stderr
        requests = receiver.behaviour.requests
    wire = b"".join(request.SerializeToString() for request in requests)
    assert secret.encode() not in wire
    assert b"invoke_agent codex" in wire
