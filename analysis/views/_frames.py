"""Columnar views of loaded sessions: one polars frame each for sessions, turns and tool calls."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
import polars as pl

from analysis.models import Session, ToolCall

SESSION_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "source": pl.String,
    "format": pl.String,
    "title": pl.String,
    "models": pl.List(pl.String),
    "turns": pl.Int64,
    "tool_calls": pl.Int64,
    "subagent_tool_calls": pl.Int64,
    "distinct_tools": pl.Int64,
    "catalog_size": pl.Int64,
    "input_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "issues": pl.Int64,
}

TURN_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "ask": pl.String,
    "command": pl.String,
    "timestamp": pl.Datetime("us", "UTC"),
    "line": pl.Int64,
    "assistant_messages": pl.Int64,
    "tool_calls": pl.Int64,
    "tools": pl.List(pl.String),
    "subagent_tool_calls": pl.Int64,
    "parallel_calls": pl.Int64,
    "errors": pl.Int64,
    "events": pl.Int64,
}

TOOL_CALL_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "turn_index": pl.Int64,
    "call_id": pl.String,
    "tool": pl.String,
    "input_json": pl.String,
    "has_result": pl.Boolean,
    "is_error": pl.Boolean,
    "result_chars": pl.Int64,
    "parallel_group_size": pl.Int64,
    "is_subagent": pl.Boolean,
    "parent_call_id": pl.String,
    "line": pl.Int64,
}


def sessions_frame(sessions: Sequence[Session]) -> pl.DataFrame:
    rows = []
    for session in sessions:
        usage = session.usage()
        calls = session.tool_call_counts()
        rows.append(
            {
                "session_id": session.session_id,
                "source": session.source,
                "format": session.format,
                "title": session.title,
                "models": session.models(),
                "turns": len(session.turns),
                "tool_calls": sum(calls.values()),
                "subagent_tool_calls": sum(session.subagent_tool_call_counts().values()),
                "distinct_tools": len(calls),
                "catalog_size": max((len(c.tools) for c in session.catalogs), default=None),
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "issues": len(session.issues),
            }
        )
    return pl.DataFrame(rows, schema=SESSION_SCHEMA)


def turns_frame(sessions: Sequence[Session]) -> pl.DataFrame:
    rows = []
    for session in sessions:
        for turn in session.turns:
            calls = list(turn.tool_calls())
            rows.append(
                {
                    "session_id": session.session_id,
                    "turn_index": turn.index,
                    "ask": turn.ask,
                    "command": turn.command,
                    "timestamp": turn.timestamp,
                    "line": turn.line,
                    "assistant_messages": len(turn.messages),
                    "tool_calls": len(calls),
                    "tools": [call.name for call in calls],
                    "subagent_tool_calls": sum(1 for _ in turn.subagent_tool_calls()),
                    "parallel_calls": sum(
                        len(m.tool_calls) for m in turn.messages if len(m.tool_calls) > 1
                    ),
                    "errors": sum(1 for c in calls if c.result is not None and c.result.is_error),
                    "events": len(turn.events),
                }
            )
    return pl.DataFrame(rows, schema=TURN_SCHEMA)


def _call_row(
    session_id: str, turn_index: int, call: ToolCall, group: int, parent: str | None
) -> dict[str, object]:
    return {
        "session_id": session_id,
        "turn_index": turn_index,
        "call_id": call.id,
        "tool": call.name,
        "input_json": orjson.dumps(call.input).decode(),
        "has_result": call.result is not None,
        "is_error": call.result is not None and call.result.is_error,
        "result_chars": len(call.result.content) if call.result else None,
        "parallel_group_size": group,
        "is_subagent": parent is not None,
        "parent_call_id": parent,
        "line": call.line,
    }


def tool_calls_frame(sessions: Sequence[Session]) -> pl.DataFrame:
    """Every tool call, the main agent's and its subagents' (``is_subagent``), in order."""
    rows = []
    for session in sessions:
        for turn in session.turns:
            for message in turn.messages:
                for call in message.tool_calls:
                    rows.append(
                        _call_row(
                            session.session_id, turn.index, call, len(message.tool_calls), None
                        )
                    )
                    if call.subagent is None:
                        continue
                    for sub_message in call.subagent.messages:
                        rows.extend(
                            _call_row(
                                session.session_id,
                                turn.index,
                                sub_call,
                                len(sub_message.tool_calls),
                                call.id,
                            )
                            for sub_call in sub_message.tool_calls
                        )
    return pl.DataFrame(rows, schema=TOOL_CALL_SCHEMA)
