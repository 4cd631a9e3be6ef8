"""Claude Code transcripts, one crafted case at a time."""

from __future__ import annotations

import json
from pathlib import Path

from records import SESSION, assistant, progress, result, system, text, tool_use, user

import analysis


def load_one(path: Path) -> analysis.Session:
    loaded = analysis.load([path])
    assert len(loaded.sessions) == 1, loaded.all_issues()
    return loaded.sessions[0]


def test_blocks_of_one_message_are_grouped_and_parallel_calls_appear(write_jsonl):
    path = write_jsonl(
        [
            user("u1", "find the retry logic"),
            assistant("a1", "msg_1", text("Searching two ways."), parent="u1"),
            assistant("a2", "msg_1", tool_use("t1", "Grep", pattern="retry"), parent="a1"),
            assistant("a3", "msg_1", tool_use("t2", "Glob", pattern="**/retry*"), parent="a2"),
            result("r1", "t1", "src/a.py:1"),
            result("r2", "t2", "src/retry.py"),
            assistant("a4", "msg_2", text("Found it."), parent="r2"),
        ]
    )
    session = load_one(path)
    (turn,) = session.turns
    assert [len(m.tool_calls) for m in turn.messages] == [2, 0]
    first = turn.messages[0]
    assert first.text == "Searching two ways."
    assert [c.name for c in first.tool_calls] == ["Grep", "Glob"]
    assert [c.result.content for c in first.tool_calls] == ["src/a.py:1", "src/retry.py"]
    assert first.tool_calls[0].input == {"pattern": "retry"}
    assert first.tool_calls[0].line == 3


def test_blocks_of_one_message_interleaved_with_results_still_group(write_jsonl):
    path = write_jsonl(
        [
            user("u1", "go"),
            assistant("a1", "msg_1", tool_use("t1", "Bash", command="ls")),
            progress("p1", {"type": "hook_progress", "hookEvent": "PreToolUse"}, "t1"),
            result("r1", "t1", "a b"),
            assistant("a2", "msg_1", tool_use("t2", "Read", file_path="a")),
            result("r2", "t2", "x"),
        ]
    )
    (turn,) = load_one(path).turns
    assert len(turn.messages) == 1
    assert [c.id for c in turn.messages[0].tool_calls] == ["t1", "t2"]


def test_duplicate_records_and_repeated_tool_use_ids_count_once(write_jsonl):
    call = assistant("a1", "msg_1", tool_use("t1", "Read", file_path="a"))
    path = write_jsonl(
        [user("u1", "go"), call, call, assistant("a9", "msg_1", tool_use("t1", "Read"))]
    )
    assert load_one(path).tool_call_counts() == {"Read": 1}


def test_usage_is_taken_from_the_last_block_of_a_message(write_jsonl):
    first = assistant("a1", "msg_1", text("a"))
    last = assistant("a2", "msg_1", tool_use("t1", "Read", file_path="a"))
    last["message"]["usage"] = {
        "input_tokens": 3,
        "output_tokens": 120,
        "cache_read_input_tokens": 9,
    }
    session = load_one(write_jsonl([user("u1", "go"), first, last]))
    assert session.usage().output_tokens == 120
    assert session.usage().cache_read_input_tokens == 9


def test_tool_result_with_error_flag_and_array_content(write_jsonl):
    path = write_jsonl(
        [
            user("u1", "run it"),
            assistant("a1", "msg_1", tool_use("t1", "Bash", command="pytest")),
            result(
                "r1",
                "t1",
                [text("line one"), {"type": "image", "source": {}}, text("line two")],
                is_error=True,
            ),
        ]
    )
    call = next(load_one(path).tool_calls())
    assert call.result is not None
    assert call.result.is_error is True
    assert call.result.content == "line one\n[image]\nline two"


def test_thinking_blocks_are_kept_apart_from_text(write_jsonl):
    path = write_jsonl(
        [
            user("u1", "why?"),
            assistant("a1", "msg_1", {"type": "thinking", "thinking": "hmm", "signature": "x"}),
            assistant("a2", "msg_1", text("Because.")),
        ]
    )
    message = load_one(path).turns[0].messages[0]
    assert (message.thinking, message.text) == ("hmm", "Because.")


def test_what_is_not_a_turn(write_jsonl):
    caveat = "<local-command-caveat>Caveat: ...</local-command-caveat>"
    path = write_jsonl(
        [
            {
                "type": "file-history-snapshot",
                "messageId": "m",
                "snapshot": {},
                "isSnapshotUpdate": False,
            },
            user("u1", "first ask"),
            assistant("a1", "msg_1", tool_use("t1", "Bash", command="sleep 9")),
            user("u2", [text("[Request interrupted by user for tool use]")]),
            user("u3", caveat, isMeta=True),
            user(
                "u4",
                "<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>",
            ),
            user("u5", "<local-command-stdout>Reconnected.</local-command-stdout>"),
            user("u6", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "sessionId": SESSION,
                "content": "also check b",
            },
            system("s1", "local_command", content="<command-name>/model</command-name>"),
            system("s2", "turn_duration", durationMs=5),
            user("u7", [text("second ask"), {"type": "image", "source": {}}]),
        ]
    )
    session = load_one(path)
    assert [t.ask for t in session.turns] == ["first ask", "/mcp", "second ask\n[image]"]
    assert [t.index for t in session.turns] == [0, 1, 2]
    assert session.turns[1].command == "/mcp"
    assert [e.kind for e in session.turns[0].events] == ["interrupt"]
    assert [e.kind for e in session.turns[1].events] == [
        "local_command",
        "background_task",
        "queued_message",
        "local_command",
    ]
    assert session.issues == []


def test_slash_command_expansion_belongs_to_the_command_turn(write_jsonl):
    command = (
        "<command-message>review</command-message>\n"
        "<command-name>/review</command-name>\n<command-args>src</command-args>"
    )
    legacy_expansion = user("u2", [text("Review the code in the given folder.")], parent="u1")
    path = write_jsonl(
        [user("u1", command), legacy_expansion, assistant("a1", "msg_1", text("Reviewing."))]
    )
    (turn,) = load_one(path).turns
    assert (turn.ask, turn.command) == ("/review src", "/review")
    assert turn.expanded_prompt == "Review the code in the given folder."


def test_compaction_is_an_event_not_a_turn(write_jsonl):
    path = write_jsonl(
        [
            user("u1", "long task"),
            assistant("a1", "msg_1", tool_use("t1", "Read", file_path="a")),
            system(
                "s1",
                "compact_boundary",
                content="Conversation compacted",
                compactMetadata={"trigger": "auto", "preTokens": 160000},
            ),
            user(
                "u2", "This session is being continued ... Summary: read a.", isCompactSummary=True
            ),
            assistant("a2", "msg_2", tool_use("t2", "Edit", file_path="a")),
            user("u3", "thanks"),
        ]
    )
    session = load_one(path)
    assert [t.ask for t in session.turns] == ["long task", "thanks"]
    events = session.turns[0].events
    assert [e.kind for e in events] == ["compaction", "compaction"]
    assert "160000" in events[0].text
    assert "Summary: read a." in events[1].text
    assert session.tool_call_counts() == {"Read": 1, "Edit": 1}


COMPACT_COMMAND = (
    "<command-name>/compact</command-name>\n"
    "<command-message>compact</command-message>\n<command-args></command-args>"
)
CAVEAT = "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>"


def _manual_compaction(summary: dict, first_uuid: str = "c1") -> list[dict]:
    """A ``/compact`` as Claude Code writes it: boundary, summary, caveat, command, output."""
    return [
        system(
            f"{first_uuid}-boundary",
            "compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "manual", "preTokens": 90000},
        ),
        summary,
        user(f"{first_uuid}-caveat", CAVEAT, isMeta=True),
        user(f"{first_uuid}-command", COMPACT_COMMAND),
        user(f"{first_uuid}-stdout", "<local-command-stdout>Compacted</local-command-stdout>"),
    ]


def test_manual_compaction_belongs_to_the_compact_turn(write_jsonl):
    summary = user(
        "u2", "This session is being continued ... Summary: read a.", isCompactSummary=True
    )
    path = write_jsonl(
        [
            user("u1", "long task"),
            assistant("a1", "msg_1", tool_use("t1", "Read", file_path="a")),
            result("r1", "t1", "x"),
            *_manual_compaction(summary),
            user("u3", "now edit a"),
            assistant("a2", "msg_2", tool_use("t2", "Edit", file_path="a")),
        ]
    )
    session = load_one(path)
    assert [(t.ask, t.command) for t in session.turns] == [
        ("long task", None),
        ("/compact", "/compact"),
        ("now edit a", None),
    ]
    before, compact, after = session.turns
    assert before.events == []
    assert after.events == []
    assert [(e.kind, e.line) for e in compact.events] == [
        ("compaction", 4),
        ("compaction", 5),
        ("local_command", 8),
    ]
    assert "trigger: manual" in compact.events[0].text
    assert "Summary: read a." in compact.events[1].text
    assert compact.messages == []  # no model response: nothing to judge
    assert session.tool_call_counts() == {"Read": 1, "Edit": 1}


def test_compaction_events_on_the_real_session(corpus, tmp_path):
    """The real session compacts automatically mid-turn; the same session compacted with
    ``/compact`` at that point puts the compaction on the ``/compact`` turn."""
    path = corpus / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    boundary = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    summary = boundary + 1
    assert records[summary].get("isCompactSummary") is True
    asks = [
        number
        for number, r in enumerate(records, start=1)
        if r["type"] == "user"
        and isinstance(r["message"]["content"], str)
        and not r.get("isCompactSummary")
        and not r.get("isMeta")
        and not r["message"]["content"].startswith(("<", "[Request interrupted"))
    ]
    auto_turn = sum(1 for number in asks if number < boundary + 1) - 1

    session = load_one(path)
    compactions = [
        (turn.index, event.line)
        for turn in session.turns
        for event in turn.events
        if event.kind == "compaction"
    ]
    assert compactions == [(auto_turn, boundary + 1), (auto_turn, summary + 1)]

    meta = {**records[boundary]["compactMetadata"], "trigger": "manual"}
    manual_boundary = {**records[boundary], "compactMetadata": meta}
    manual = [
        *lines[:boundary],
        *(json.dumps(r) for r in _manual_compaction(records[summary], first_uuid="m")),
        json.dumps(user("m-ask", "carry on with gqc.6")),
        *lines[summary + 1 :],
    ]
    manual[boundary] = json.dumps(manual_boundary)
    derived = tmp_path / "manual.jsonl"
    derived.write_text("\n".join(manual) + "\n")
    session = load_one(derived)
    (compact,) = [t for t in session.turns if t.command == "/compact"]
    assert compact.index == auto_turn + 1
    assert [(e.kind, e.line) for e in compact.events] == [
        ("compaction", boundary + 1),
        ("compaction", summary + 1),
        ("local_command", boundary + 5),
    ]
    assert compact.messages == []
    assert not any(
        e.kind == "compaction" for t in session.turns if t is not compact for e in t.events
    )
    assert len(session.turns) == len(asks) + 2  # the /compact turn and the new ask


def _agent_progress(uuid: str, parent_tool: str, agent_id: str, inner: dict) -> dict:
    data = {
        "message": {k: inner[k] for k in ("type", "message", "uuid", "timestamp")},
        "normalizedMessages": [],
        "type": "agent_progress",
        "prompt": "look",
        "agentId": agent_id,
    }
    return progress(uuid, data, parent_tool)


def _subagent_records() -> list[dict]:
    return [
        user("s-u1", "look around", isSidechain=True, agentId="a77"),
        assistant(
            "s-a1", "msg_s1", tool_use("st1", "Glob", pattern="*"), isSidechain=True, agentId="a77"
        ),
        result("s-r1", "st1", "a.py", isSidechain=True, agentId="a77"),
        assistant(
            "s-a2",
            "msg_s2",
            tool_use("st2", "Read", file_path="a.py"),
            isSidechain=True,
            agentId="a77",
        ),
        result("s-r2", "st2", "x", isSidechain=True, agentId="a77"),
        assistant("s-a3", "msg_s3", text("done"), isSidechain=True, agentId="a77"),
    ]


def _parent_records(with_progress: bool) -> list[dict]:
    records = [
        user("u1", "survey the repo"),
        assistant("a1", "msg_1", tool_use("task1", "Task", prompt="look around", description="d")),
    ]
    if with_progress:
        records += [
            _agent_progress(f"p{i}", "task1", "a77", r) for i, r in enumerate(_subagent_records())
        ]
    records.append(
        result(
            "r1", "task1", [text("done")], toolUseResult={"status": "completed", "agentId": "a77"}
        )
    )
    return records


def test_subagent_from_its_own_file_attaches_to_the_task_call(write_jsonl):
    path = write_jsonl(_parent_records(with_progress=False), name=f"{SESSION}.jsonl")
    write_jsonl(_subagent_records(), name=f"{SESSION}/subagents/agent-a77.jsonl")
    loaded = analysis.load([path.parent])
    (session,) = loaded.sessions  # the subagent file is not a session of its own
    task = next(session.tool_calls())
    assert task.subagent is not None
    assert (task.subagent.source, task.subagent.agent_id) == ("file", "a77")
    assert task.subagent.prompt == "look around"
    assert session.tool_call_counts() == {"Task": 1}
    assert session.subagent_tool_call_counts() == {"Glob": 1, "Read": 1}


def test_subagent_from_progress_records_when_its_file_is_missing(write_jsonl):
    session = load_one(write_jsonl(_parent_records(with_progress=True)))
    task = next(session.tool_calls())
    assert task.subagent is not None
    assert task.subagent.source == "progress"
    assert [c.result.content for c in task.subagent.tool_calls()] == ["a.py", "x"]
    assert session.subagent_tool_call_counts() == {"Glob": 1, "Read": 1}
    assert len(session.turns) == 1


def test_subagent_in_both_file_and_progress_is_counted_once(write_jsonl):
    path = write_jsonl(_parent_records(with_progress=True), name=f"{SESSION}.jsonl")
    write_jsonl(_subagent_records(), name=f"{SESSION}/subagents/agent-a77.jsonl")
    session = load_one(path)
    assert next(session.tool_calls()).subagent.source == "file"
    assert session.subagent_tool_call_counts() == {"Glob": 1, "Read": 1}
    assert session.detached_subagents == []


def test_legacy_inline_sidechain_attaches_by_prompt_and_summary_is_the_title(write_jsonl):
    legacy = [
        {"type": "summary", "summary": "Repo survey", "leafUuid": "x"},
        user("u1", "survey", version="1.0.98"),
        assistant("a1", "msg_1", tool_use("task1", "Task", prompt="look around"), version="1.0.98"),
        assistant("a2", "msg_1", tool_use("todo", "TodoWrite", todos=[]), version="1.0.98"),
        user("s1", "look around", isSidechain=True, version="1.0.98"),
        assistant(
            "s2",
            "msg_s",
            tool_use("st1", "MultiEdit", file_path="a", edits=[]),
            parent="s1",
            isSidechain=True,
        ),
        assistant(
            "s3", "msg_s", tool_use("st2", "BashOutput", bash_id="b"), parent="s2", isSidechain=True
        ),
        result("r1", "task1", [text("done")]),
    ]
    session = load_one(write_jsonl(legacy))
    assert session.format == "claude-code-legacy"
    assert session.title == "Repo survey"
    assert session.tool_call_counts() == {"Task": 1, "TodoWrite": 1}
    task = next(session.tool_calls())
    assert task.subagent is not None
    assert task.subagent.source == "sidechain"
    assert len(task.subagent.messages) == 1
    assert session.subagent_tool_call_counts() == {"MultiEdit": 1, "BashOutput": 1}


def test_tool_input_that_looks_like_a_progress_record_is_still_a_call(write_jsonl):
    # Claude Code writes "message" before "type" in assistant records; a tool input may hold
    # any JSON, including an object that says "type":"progress".
    tricky = (
        b'{"parentUuid":"u1","message":{"id":"m","role":"assistant","content":[{"type":'
        b'"tool_use","id":"t","name":"Write","input":{"type":"progress","data":{}}}]},'
        b'"type":"assistant","uuid":"a1","sessionId":"s"}'
    )
    session = load_one(write_jsonl([user("u1", "write the fixture"), tricky]))
    assert next(session.tool_calls()).input == {"type": "progress", "data": {}}


def test_broken_progress_line_is_reported_and_neighbours_kept(write_jsonl):
    broken = b'{"type":"progress","data":{"type":"hook_progress"'
    path = write_jsonl([user("u1", "hi"), broken, assistant("a1", "msg_1", text("hello"))])
    session = load_one(path)
    assert [(i.line, "not valid JSON" in i.reason) for i in session.issues] == [(2, True)]
    assert session.turns[0].messages[0].text == "hello"


def test_record_with_a_field_of_the_wrong_type_is_an_issue(write_jsonl):
    odd = progress("p1", {"type": "agent_progress"}, "t1")
    odd["data"] = "not an object"
    session = load_one(write_jsonl([user("u1", "hi"), odd, assistant("a1", "msg_1", text("ok"))]))
    (issue,) = session.issues
    assert issue.line == 2
    assert issue.reason.startswith("record of the wrong shape (Expected `object | null`")
    assert session.turns[0].messages[0].text == "ok"
