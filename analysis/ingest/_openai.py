"""OpenAI chat-format agent trajectories (tau-bench's format).

A trajectory is a list of chat messages: ``system``, ``user``, ``assistant`` with
``tool_calls`` (arguments as a JSON string), and ``tool`` replies linked by ``tool_call_id``.
Files hold one trajectory, a list of them (tau-bench: ``{"task_id", "trial", "reward",
"traj": [...]}``), or one per line (JSONL).
"""

from __future__ import annotations

from typing import Any

import orjson

from analysis.catalog import catalog_from_entries, looks_like_catalog
from analysis.ingest._claude_code import result_text
from analysis.ingest._context import ParseContext

MESSAGE_KEYS = ("traj", "messages")


def messages_of(item: Any) -> list[Any] | None:
    if isinstance(item, dict):
        for key in MESSAGE_KEYS:
            if isinstance(item.get(key), list):
                return list(item[key])
        return None
    if isinstance(item, list) and item and all(isinstance(m, dict) and "role" in m for m in item):
        return item
    return None


def looks_like_trajectory(item: Any) -> bool:
    messages = messages_of(item)
    return bool(messages) and any(isinstance(m, dict) and "role" in m for m in messages or [])


def _session_id(item: Any, stem: str, position: int) -> str:
    if isinstance(item, dict):
        for key in ("session_id", "id", "conversation_id"):
            if isinstance(item.get(key), str | int):
                return str(item[key])
        if "task_id" in item:
            trial = f"-trial{item['trial']}" if "trial" in item else ""
            return f"{stem}/task{item['task_id']}{trial}"
    return f"{stem}/{position}"


def _metadata(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        return {}
    keys = ("task_id", "trial", "reward")
    return {key: item[key] for key in keys if isinstance(item.get(key), int | float | str)}


class _TrajectoryBuilder:
    def __init__(self, context: ParseContext, line: int, session_id: str) -> None:
        self.context = context
        self.line = line
        self.session_id = session_id
        self.turns: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.system_prompt: str | None = None

    def _issue(self, reason: str) -> None:
        self.context.issue(self.line, reason)

    def _turn(self) -> dict[str, Any]:
        if not self.turns:
            self._new_turn("")
        return self.turns[-1]

    def _new_turn(self, ask: str) -> None:
        self.turns.append(
            {"index": len(self.turns), "ask": ask, "line": self.line, "messages": [], "events": []}
        )

    def add(self, position: int, message: Any) -> None:
        if not isinstance(message, dict):
            self._issue(f"{self.session_id}: message {position} is not an object; skipped")
            return
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else result_text(content)
        if role == "system":
            self.system_prompt = text
        elif role == "user":
            self._new_turn(text)
        elif role == "assistant":
            self._add_assistant(position, message, text)
        elif role == "tool":
            call = self.calls.get(str(message.get("tool_call_id")))
            if call is None:
                self._issue(f"{self.session_id}: tool reply {position} answers no known call")
                return
            call["result"] = self.context.tool_result(text, is_error=False)
        else:
            self._issue(f"{self.session_id}: message {position} has unknown role {role!r}")

    def _add_assistant(self, position: int, message: dict[str, Any], text: str) -> None:
        calls = []
        for index, raw in enumerate(message.get("tool_calls") or []):
            call = self._call(position, index, raw)
            if call is not None:
                self.calls[call["id"]] = call
                calls.append(call)
        self._turn()["messages"].append(
            {"id": f"{self.session_id}/m{position}", "text": text.strip(), "tool_calls": calls}
        )

    def _call(self, position: int, index: int, raw: Any) -> dict[str, Any] | None:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            self._issue(f"{self.session_id}: message {position} has a tool call without a name")
            return None
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = orjson.loads(arguments) if arguments.strip() else {}
            except orjson.JSONDecodeError:
                self._issue(
                    f"{self.session_id}: arguments of {function['name']} in message {position} "
                    "are not valid JSON; kept as text under '_raw'"
                )
                arguments = {"_raw": arguments}
        if not isinstance(arguments, dict):
            arguments = {"value": arguments}
        call_id = raw.get("id") or f"{self.session_id}/m{position}/c{index}"
        return {"id": str(call_id), "name": function["name"], "input": arguments, "line": self.line}


def parse_trajectory(
    item: Any, line: int, stem: str, position: int, context: ParseContext
) -> dict[str, Any] | None:
    messages = messages_of(item)
    if messages is None:
        context.issue(line, "not a chat trajectory (no message list)")
        return None
    session_id = _session_id(item, stem, position)
    builder = _TrajectoryBuilder(context, line, session_id)
    for index, message in enumerate(messages):
        builder.add(index, message)
    session: dict[str, Any] = {
        "session_id": session_id,
        "source": context.file,
        "format": "openai",
        "system_prompt": builder.system_prompt,
        "metadata": _metadata(item),
        "turns": builder.turns,
    }
    tools = item.get("tools") if isinstance(item, dict) else None
    if isinstance(tools, list) and looks_like_catalog(tools):
        session["catalogs"] = [catalog_from_entries(tools, context.file, "trace", context.issues)]
        for turn in builder.turns:
            turn["catalog_index"] = 0
    return session
