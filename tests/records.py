"""Builders for crafted Claude Code records, as the CLI writes them (compact JSON)."""

from __future__ import annotations

from typing import Any

SESSION = "11111111-2222-3333-4444-555555555555"


def _base(kind: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    record = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/repo",
        "sessionId": SESSION,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
    }
    record.update(extra)
    record["uuid"] = uuid
    record["timestamp"] = "2026-02-11T20:00:00.000Z"
    return record


def user(uuid: str, content: Any, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    return _base("user", uuid, parent, message={"role": "user", "content": content}, **extra)


def assistant(
    uuid: str, message_id: str, block: dict[str, Any], parent: str | None = None, **extra: Any
) -> dict[str, Any]:
    message = {
        "model": "claude-opus-4-6",
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [block],
        "usage": {"input_tokens": 3, "output_tokens": 7},
    }
    return _base("assistant", uuid, parent, message=message, **extra)


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(
    uuid: str, call_id: str, content: Any, is_error: bool = False, **extra: Any
) -> dict[str, Any]:
    block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": content}
    if is_error:
        block["is_error"] = True
    return user(uuid, [block], **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def progress(uuid: str, data: dict[str, Any], parent_tool: str | None = None) -> dict[str, Any]:
    return _base(
        "progress", uuid, None, data=data, parentToolUseID=parent_tool, toolUseID=parent_tool
    )


def system(uuid: str, subtype: str, **extra: Any) -> dict[str, Any]:
    return _base("system", uuid, None, subtype=subtype, **extra)


def two_turns() -> list[dict[str, Any]]:
    """Two asks, the first answered by one Read call and its result."""
    return [
        user("u1", "first"),
        assistant("a1", "msg_1", tool_use("t1", "Read", file_path="a")),
        result("r1", "t1", "content"),
        user("u2", "second"),
    ]
