"""OpenAI Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

The Codex CLI, its IDE extension and Codex Desktop write the same file: one JSON record a line,
``{"timestamp", "type", "payload"}``. ``session_meta`` opens it (id, working folder,
``cli_version``, originator, model provider, the agent's ``base_instructions``, and in newer
versions the ``dynamic_tools`` the app added); ``turn_context`` gives the model and the approval
and sandbox policy of the turn that follows; ``response_item`` records are what the model saw and
said (messages, ``reasoning``, calls and their outputs); ``event_msg`` records are what the app
showed (the user's message, command exit codes, token counts, aborts, compactions).

A turn is one ``user_message`` (or, in rollouts without those events, one user ``message``
item that is not the app's own context) and everything until the next. A step is one model
response: the assistant's consecutive items, up to the call outputs or the token count that
follow it, so parallel calls are one decision. Outputs pair with calls by ``call_id``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from analysis._jsonio import iter_jsonl, timestamp
from analysis.ingest._claude_code import result_text
from analysis.ingest._context import ParseContext

RECORD_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
_QUIET_ITEMS = frozenset({"ghost_snapshot", "compaction", "compaction_summary"})
"""Items of the app's own bookkeeping: nothing the model chose."""
_CONTEXT_PREFIXES = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
)
"""User-role items Codex writes itself (instructions, the environment): context, not an ask."""
_ID_IN_NAME = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def looks_like_codex(record: Any) -> bool:
    """A rollout record: ``{"timestamp", "type", "payload"}`` of one of Codex's record types."""
    return (
        isinstance(record, dict)
        and record.get("type") in RECORD_TYPES
        and isinstance(record.get("payload"), dict)
    )


def qualified_name(name: str, namespace: Any) -> str:
    """A call's tool as the menu names it: an MCP tool's namespace (``mcp__node_repl__``) and
    its name (``js``) make ``mcp__node_repl__js``; another namespace is joined by ``__``."""
    if not isinstance(namespace, str) or not namespace:
        return name
    return f"{namespace}{name}" if namespace.endswith("__") else f"{namespace}__{name}"


def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in kinds
    )


class _RolloutBuilder:
    def __init__(self, path: Path, context: ParseContext, user_events: bool) -> None:
        self.context = context
        self.user_events = user_events
        """The rollout has ``user_message`` events: those, not user items, open turns."""
        found = _ID_IN_NAME.search(path.name)
        self.session: dict[str, Any] = {
            "session_id": found.group(1) if found else path.stem,
            "source": context.file,
            "format": "codex",
            "metadata": {},
            "catalogs": [],
            "turns": [],
            "issues": [],
        }
        self.turn_context: dict[str, Any] = {}
        self.contexts: list[dict[str, Any]] = []
        self.message: dict[str, Any] | None = None
        self.calls: dict[str, dict[str, Any]] = {}
        self.failed: set[str] = set()
        """Calls whose end event said they failed, before or after their output."""

    def add(self, line: int, record: Any) -> None:
        if not looks_like_codex(record):
            self.context.issue(line, "not a Codex rollout record ({timestamp, type, payload})")
            return
        payload, moment = record["payload"], timestamp(record.get("timestamp"))
        kind = record["type"]
        if kind == "session_meta":
            self._meta(payload, line)
        elif kind == "turn_context":
            self.turn_context = payload
        elif kind == "compacted":
            self._event("compaction", "the conversation was compacted", moment, line)
        elif kind == "event_msg":
            self._app_event(payload, moment, line)
        else:
            self._item(payload, moment, line)

    def _meta(self, payload: dict[str, Any], line: int) -> None:
        if isinstance(payload.get("id"), str):
            self.session["session_id"] = payload["id"]
        for key, field in (("cwd", "cwd"), ("cli_version", "agent_version")):
            if isinstance(payload.get(key), str):
                self.session[field] = payload[key]
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            self.session["git_branch"] = git["branch"]
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else instructions
        if isinstance(text, str):
            self.session["system_prompt"] = text
        for key in ("originator", "model_provider", "source"):
            if isinstance(payload.get(key), str):
                self.session["metadata"][key] = payload[key]
        tools = payload.get("dynamic_tools")
        if isinstance(tools, list) and tools:
            self._dynamic_tools(tools, line, timestamp(payload.get("timestamp")))

    def _dynamic_tools(self, tools: list[Any], line: int, moment: str | None) -> None:
        definitions = []
        for position, tool in enumerate(tools):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                self.context.issue(line, f"dynamic_tools entry {position} is not a tool; skipped")
                continue
            schema = tool.get("inputSchema", tool.get("input_schema"))
            description = tool.get("description")
            definitions.append(
                {
                    "name": qualified_name(tool["name"], tool.get("namespace")),
                    "description": description if isinstance(description, str) else None,
                    "parameters": schema if isinstance(schema, dict) else {},
                    "provenance": "trace",
                }
            )
        catalog = {"tools": definitions, "source": f"{self.context.file}:{line} dynamic_tools"}
        self.session["catalogs"].append(catalog | {"captured_at": moment})

    def _app_event(self, payload: dict[str, Any], moment: str | None, line: int) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            message = payload.get("message")
            self._ask(message if isinstance(message, str) else "", moment, line)
        elif kind == "token_count":
            self._usage(payload.get("info"))
            self.message = None
        elif kind in ("exec_command_end", "patch_apply_end"):
            self._ended(payload)
        elif kind == "turn_aborted":
            reason = payload.get("reason")
            self._event("interrupt", f"turn aborted ({reason})" if reason else "", moment, line)
        elif kind == "context_compacted":
            self._event("compaction", "the context was compacted", moment, line)

    def _item(self, item: dict[str, Any], moment: str | None, line: int) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(item, moment, line)
        elif kind == "reasoning":  # its summary and text; an encrypted one still opens a response
            summary = _texts(item.get("summary"), ("summary_text",))
            text = _texts(item.get("content"), ("reasoning_text", "text"))
            _append(self._response(moment, line), "thinking", summary, text)
        elif kind in _CALLS:
            self._call(item, moment, line)
        elif kind in _OUTPUTS:
            self._output(item, line)
        elif kind not in _QUIET_ITEMS:
            self.context.issue(line, f"unknown response item type {kind!r}")

    def _message(self, item: dict[str, Any], moment: str | None, line: int) -> None:
        role = item.get("role")
        if role == "assistant":
            text = _texts(item.get("content"), ("output_text", "text"))
            _append(self._response(moment, line), "text", text)
        elif role == "user" and not self.user_events:
            text = _texts(item.get("content"), ("input_text", "text"))
            if not text.lstrip().startswith(_CONTEXT_PREFIXES):
                self._ask(text, moment, line)

    def _turn(self, moment: str | None, line: int) -> dict[str, Any]:
        if not self.session["turns"]:
            self._ask("", moment, line)
        turn: dict[str, Any] = self.session["turns"][-1]
        return turn

    def _ask(self, ask: str, moment: str | None, line: int) -> None:
        self.message = None
        turns = self.session["turns"]
        turns.append(
            {
                "index": len(turns),
                "ask": ask,
                "timestamp": moment,
                "line": line,
                "agent_version": self.session.get("agent_version"),
                "messages": [],
                "events": [],
            }
        )
        context = self.turn_context
        if context:
            policy = context.get("sandbox_policy")
            self.contexts.append(
                {
                    "turn_index": len(turns) - 1,
                    "model": context.get("model"),
                    "approval_policy": context.get("approval_policy"),
                    "sandbox": policy.get("type") if isinstance(policy, dict) else policy,
                }
            )

    def _response(self, moment: str | None, line: int) -> dict[str, Any]:
        """The model response being written: the open one, else a new one in the turn."""
        if self.message is None:
            model = self.turn_context.get("model")
            self.message = {
                "id": f"{self.session['session_id']}:{line}",
                "model": model if isinstance(model, str) else None,
                "text": "",
                "thinking": "",
                "tool_calls": [],
                "timestamp": moment,
            }
            self._turn(moment, line)["messages"].append(self.message)
        return self.message

    def _call(self, item: dict[str, Any], moment: str | None, line: int) -> None:
        kind = item["type"]
        call_id = item.get("call_id") or item.get("id") or f"{kind}:{line}"
        if kind == "web_search_call":
            name, arguments = "web_search", item.get("action")
        elif kind == "local_shell_call":
            name, arguments = "local_shell", item.get("action")
        else:
            raw_name = item.get("name")
            if not isinstance(raw_name, str) or not raw_name:
                self.context.issue(line, f"{kind} without a tool name; skipped")
                return
            name = qualified_name(raw_name, item.get("namespace"))
            if kind == "custom_tool_call":
                arguments = {
                    "input": item.get("input") if isinstance(item.get("input"), str) else ""
                }
            else:
                arguments = self._arguments(item.get("arguments"), name, line)
        call: dict[str, Any] = {
            "id": str(call_id),
            "name": name,
            "input": arguments if isinstance(arguments, dict) else {"arguments": arguments},
            "timestamp": moment,
            "line": line,
        }
        self._response(moment, line)["tool_calls"].append(call)
        self.calls[call["id"]] = call

    def _arguments(self, raw: Any, name: str, line: int) -> Any:
        """A call's arguments: a JSON string parsed; a malformed one kept as its raw text."""
        if not isinstance(raw, str):
            return raw if raw is not None else {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.context.issue(
                line, f"the arguments of a {name} call are not valid JSON; kept as text"
            )
            return {"arguments": raw}

    def _output(self, item: dict[str, Any], line: int) -> None:
        self.message = None
        call = self.calls.get(str(item.get("call_id")))
        if call is None:
            self.context.issue(
                line, f"output for a call this rollout does not have ({item.get('call_id')!r})"
            )
            return
        content, failed = _output_text(item.get("output"))
        failed = failed or call["id"] in self.failed
        call["result"] = self.context.tool_result(content, failed)

    def _ended(self, payload: dict[str, Any]) -> None:
        """An exec or patch end event: a non-zero exit code or a failed patch marks the call."""
        call_id = str(payload.get("call_id"))
        exit_code = payload.get("exit_code")
        if not ((isinstance(exit_code, int) and exit_code != 0) or payload.get("success") is False):
            return
        self.failed.add(call_id)
        call = self.calls.get(call_id)
        if call is not None and call.get("result") is not None:
            call["result"]["is_error"] = True

    def _usage(self, info: Any) -> None:
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if self.message is None or not isinstance(last, dict):
            return
        cached = last.get("cached_input_tokens") or 0
        self.message["usage"] = {
            "input_tokens": max(int(last.get("input_tokens") or 0) - int(cached), 0),
            "output_tokens": int(last.get("output_tokens") or 0),
            "cache_read_input_tokens": int(cached),
        }

    def _event(self, kind: str, text: str, moment: str | None, line: int) -> None:
        self.message = None
        event = {"kind": kind, "text": text, "timestamp": moment, "line": line}
        self._turn(moment, line)["events"].append(event)

    def build(self) -> dict[str, Any] | None:
        if not self.session["turns"]:
            return None
        if self.contexts:
            self.session["metadata"]["turn_contexts"] = self.contexts
        return self.session


def _append(message: dict[str, Any], field: str, *texts: str) -> None:
    """Add ``texts`` (those not empty) to a response's ``text`` or ``thinking``, a line each."""
    message[field] = "\n".join(t for t in (message[field], *texts) if t)


def _output_text(output: Any) -> tuple[str, bool]:
    """An output's text and whether it failed. A custom tool's output may be a JSON string
    ``{"output", "metadata": {"exit_code"}}``; newer versions write ``{"content", "success"}``."""
    if isinstance(output, str) and output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            metadata = parsed.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return result_text(parsed["output"]), isinstance(code, int) and code != 0
    if isinstance(output, dict):
        return result_text(output.get("content", output.get("output"))), output.get(
            "success"
        ) is False
    return result_text(output), False


def parse_codex(path: Path, data: bytes, context: ParseContext) -> dict[str, Any] | None:
    """One session from a rollout's bytes; None when it holds no turn."""
    builder = _RolloutBuilder(path, context, b'"type":"user_message"' in data)
    for line, record in iter_jsonl(data, context.file, context.issues):
        builder.add(line, record)
    session = builder.build()
    if session is not None:
        session["issues"] = [issue.model_dump() for issue in context.issues]
    return session
