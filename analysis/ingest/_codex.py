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

Each line is decoded into the record its ``type`` names (:class:`SessionMetaRecord`,
:class:`ItemRecord`, …), each field declared with the type Codex writes; what a record does not
name is skipped unread. A record of the wrong shape is one issue naming its line and the field,
and the rest of the rollout still loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from analysis._jsonio import TOO_DEEP, iter_jsonl, timestamp
from analysis.ingest._claude_code import result_text
from analysis.ingest._context import ParseContext
from analysis.ingest._shapes import shape_problem

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
_NOT_A_RECORD = "not a Codex rollout record ({timestamp, type, payload})"


class _Object(msgspec.Struct):
    """Any JSON object, its fields left unread."""


class _Part(msgspec.Struct):
    """A content part of a message or a reasoning item (``output_text``, ``summary_text``…)."""

    type: str | None = None
    text: str = ""


_Content = list[_Part] | str | None


class _Git(msgspec.Struct):
    branch: str | None = None


class _Instructions(msgspec.Struct):
    text: str | None = None


class SessionMeta(msgspec.Struct):
    """A ``session_meta`` payload."""

    id: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    cli_version: str | None = None
    originator: str | None = None
    model_provider: str | None = None
    source: str | _Object | None = None
    """``cli``, ``vscode``…; an object for a session a subagent ran (not kept)."""
    git: _Git | None = None
    base_instructions: _Instructions | str | None = None
    dynamic_tools: list[Any] | None = None
    """Each entry read as a :class:`DynamicTool`, so that a bad one is skipped alone."""


class DynamicTool(msgspec.Struct):
    """An entry of ``session_meta.dynamic_tools``."""

    name: str
    namespace: str | None = None
    description: str | None = None
    inputSchema: dict[str, Any] | UnsetType | None = UNSET
    input_schema: dict[str, Any] | None = None


class _SandboxPolicy(msgspec.Struct):
    type: str | None = None


class TurnContext(msgspec.Struct):
    """A ``turn_context`` payload: the next turn's model and policies."""

    model: str | None = None
    approval_policy: str | dict[str, Any] | None = None
    sandbox_policy: _SandboxPolicy | str | None = None


class _OutputObject(msgspec.Struct):
    """A call output written as an object (``{"content", "success"}``)."""

    content: str | list[Any] | UnsetType | None = UNSET
    output: str | list[Any] | None = None
    success: bool | None = None


class Item(msgspec.Struct):
    """A ``response_item`` payload: a message, reasoning, a call or a call's output. The
    fields are those of every item type, each read only by the types that have it."""

    type: str | None = None
    role: str | None = None
    content: _Content = None
    summary: _Content = None
    name: str | None = None
    namespace: str | None = None
    arguments: str | dict[str, Any] | None = None
    """A JSON string (parsed when the call is read); an object is taken as it is."""
    input: str | None = None
    action: dict[str, Any] | None = None
    call_id: str | None = None
    id: str | None = None
    output: str | list[Any] | _OutputObject | None = None
    """Text, content items, or an object; a custom tool's text may hold JSON itself."""


class _UserMessage(msgspec.Struct, tag_field="type", tag="user_message"):
    message: str | None = None


class _TokenUsage(msgspec.Struct):
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None


class _TokenInfo(msgspec.Struct):
    last_token_usage: _TokenUsage | None = None


class _TokenCount(msgspec.Struct, tag_field="type", tag="token_count"):
    info: _TokenInfo | None = None


class _CallEnd(msgspec.Struct):
    """An exec or patch end event: a non-zero exit code or ``success: false`` is a failure."""

    call_id: str | None = None
    exit_code: int | None = None
    success: bool | None = None


class _ExecEnd(_CallEnd, tag_field="type", tag="exec_command_end"):
    pass


class _PatchEnd(_CallEnd, tag_field="type", tag="patch_apply_end"):
    pass


class _TurnAborted(msgspec.Struct, tag_field="type", tag="turn_aborted"):
    reason: str | None = None


class _ContextCompacted(msgspec.Struct, tag_field="type", tag="context_compacted"):
    pass


_Event = _UserMessage | _TokenCount | _ExecEnd | _PatchEnd | _TurnAborted | _ContextCompacted
"""The ``event_msg`` payloads this reader reads; the others repeat what the items hold."""


class _Record(msgspec.Struct, kw_only=True, tag_field="type"):
    timestamp: str | None = None


class SessionMetaRecord(_Record, tag="session_meta"):
    payload: SessionMeta


class TurnContextRecord(_Record, tag="turn_context"):
    payload: TurnContext


class CompactedRecord(_Record, tag="compacted"):
    payload: _Object


class ItemRecord(_Record, tag="response_item"):
    payload: Item


class EventRecord(_Record, tag="event_msg"):
    payload: msgspec.Raw
    """Read as one of :data:`_Event` by its own ``type``; the types not read stay unread."""


Record = SessionMetaRecord | TurnContextRecord | CompactedRecord | ItemRecord | EventRecord
_decode_record = msgspec.json.Decoder(Record).decode
_decode_event = msgspec.json.Decoder(_Event).decode


@dataclass(frozen=True)
class _Malformed:
    """A line that is JSON but not a rollout record of the right shape: why, for its issue."""

    reason: str


def _read_line(line: bytes) -> Record | _Malformed:
    """A line as its typed record. JSON that does not parse raises as :func:`orjson.loads`
    does (the loader words those issues); a record of the wrong shape is :class:`_Malformed`."""
    try:
        return _decode_record(line)
    except msgspec.ValidationError as error:
        raw = orjson.loads(line)  # raises if the line is not JSON at all
        return _Malformed(_record_problem(raw, error))
    except msgspec.DecodeError:
        orjson.loads(line)  # the reason worded as for any line that is not JSON
        raise


def _record_problem(raw: Any, error: msgspec.ValidationError) -> str:
    """Why ``raw`` was refused: not a rollout record at all, or which field is wrong."""
    if not isinstance(raw, dict) or raw.get("type") not in RECORD_TYPES or "payload" not in raw:
        return _NOT_A_RECORD
    payload = raw["payload"]
    kind = payload.get("type") if isinstance(payload, dict) else None
    where, problem = shape_problem(error)
    return f"{_describe(raw['type'], kind)}: {where} {problem}; skipped"


def _describe(record_type: str, kind: Any) -> str:
    """``response_item function_call``; ``session_meta record`` for a payload with no type."""
    return f"{record_type} {kind}" if isinstance(kind, str) and kind else f"{record_type} record"


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


def _texts(content: _Content, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "\n".join(part.text for part in content if part.type in kinds)


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
        self.turn_context: TurnContext | None = None
        self.contexts: list[dict[str, Any]] = []
        self.message: dict[str, Any] | None = None
        self.calls: dict[str, dict[str, Any]] = {}
        self.failed: set[str] = set()
        """Calls whose end event said they failed, before or after their output."""

    def add(self, line: int, record: Record | _Malformed) -> None:
        if isinstance(record, _Malformed):
            self.context.issue(line, record.reason)
            return
        moment = timestamp(record.timestamp)
        if isinstance(record, ItemRecord):
            self._item(record.payload, moment, line)
        elif isinstance(record, EventRecord):
            self._app_event(record.payload, moment, line)
        elif isinstance(record, SessionMetaRecord):
            self._meta(record.payload, line)
        elif isinstance(record, TurnContextRecord):
            self.turn_context = record.payload
        else:
            self._event("compaction", "the conversation was compacted", moment, line)

    def _meta(self, meta: SessionMeta, line: int) -> None:
        if meta.id is not None:
            self.session["session_id"] = meta.id
        if meta.cwd is not None:
            self.session["cwd"] = meta.cwd
        if meta.cli_version is not None:
            self.session["agent_version"] = meta.cli_version
        if meta.git is not None and meta.git.branch is not None:
            self.session["git_branch"] = meta.git.branch
        instructions = meta.base_instructions
        text = instructions.text if isinstance(instructions, _Instructions) else instructions
        if text is not None:
            self.session["system_prompt"] = text
        kept = (("originator", meta.originator), ("model_provider", meta.model_provider))
        for key, value in (*kept, ("source", meta.source)):
            if isinstance(value, str):
                self.session["metadata"][key] = value
        if meta.dynamic_tools:
            self._dynamic_tools(meta.dynamic_tools, line, timestamp(meta.timestamp))

    def _dynamic_tools(self, tools: list[Any], line: int, moment: str | None) -> None:
        definitions = []
        for position, entry in enumerate(tools):
            try:
                tool = msgspec.convert(entry, DynamicTool)
            except msgspec.ValidationError as error:
                where, problem = shape_problem(error)
                what = f"{where} {problem}" if where else problem.removeprefix("is ")
                self.context.issue(
                    line, f"dynamic_tools entry {position} is not a tool ({what}); skipped"
                )
                continue
            schema = tool.input_schema if tool.inputSchema is UNSET else tool.inputSchema
            definitions.append(
                {
                    "name": qualified_name(tool.name, tool.namespace),
                    "description": tool.description,
                    "parameters": schema if schema is not None else {},
                    "provenance": "trace",
                }
            )
        catalog = {"tools": definitions, "source": f"{self.context.file}:{line} dynamic_tools"}
        self.session["catalogs"].append(catalog | {"captured_at": moment})

    def _app_event(self, payload: msgspec.Raw, moment: str | None, line: int) -> None:
        event = self._read_event(payload, line)
        if isinstance(event, _UserMessage):
            self._ask(event.message if event.message is not None else "", moment, line)
        elif isinstance(event, _TokenCount):
            self._usage(event.info)
            self.message = None
        elif isinstance(event, _CallEnd):
            self._ended(event)
        elif isinstance(event, _TurnAborted):
            reason = event.reason
            self._event("interrupt", f"turn aborted ({reason})" if reason else "", moment, line)
        elif isinstance(event, _ContextCompacted):
            self._event("compaction", "the context was compacted", moment, line)

    def _read_event(self, payload: msgspec.Raw, line: int) -> _Event | None:
        """An ``event_msg`` payload as the event it is; None for an event not read (any
        ``type`` but those of :data:`_Event`) and for one of the wrong shape (an issue)."""
        try:
            return _decode_event(payload)
        except msgspec.ValidationError as error:
            where, problem = shape_problem(error)
            if where == "type":
                return None
            raw = msgspec.json.decode(payload)
            kind = raw.get("type") if isinstance(raw, dict) else None
            field = f"payload.{where}" if where else "payload"
            self.context.issue(line, f"{_describe('event_msg', kind)}: {field} {problem}; skipped")
        except RecursionError:
            self.context.issue(line, TOO_DEEP)
        return None

    def _item(self, item: Item, moment: str | None, line: int) -> None:
        kind = item.type
        if kind == "message":
            self._message(item, moment, line)
        elif kind == "reasoning":  # its summary and text; an encrypted one still opens a response
            summary = _texts(item.summary, ("summary_text",))
            text = _texts(item.content, ("reasoning_text", "text"))
            _append(self._response(moment, line), "thinking", summary, text)
        elif kind in _CALLS:
            self._call(item, moment, line)
        elif kind in _OUTPUTS:
            self._output(item, line)
        elif kind not in _QUIET_ITEMS:
            self.context.issue(line, f"unknown response item type {kind!r}")

    def _message(self, item: Item, moment: str | None, line: int) -> None:
        role = item.role
        if role == "assistant":
            text = _texts(item.content, ("output_text", "text"))
            _append(self._response(moment, line), "text", text)
        elif role == "user" and not self.user_events:
            text = _texts(item.content, ("input_text", "text"))
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
        if context is not None:
            policy = context.sandbox_policy
            self.contexts.append(
                {
                    "turn_index": len(turns) - 1,
                    "model": context.model,
                    "approval_policy": context.approval_policy,
                    "sandbox": policy.type if isinstance(policy, _SandboxPolicy) else policy,
                }
            )

    def _response(self, moment: str | None, line: int) -> dict[str, Any]:
        """The model response being written: the open one, else a new one in the turn (a
        turn with no ask opened first when the rollout has none yet)."""
        if self.message is None:
            turn = self._turn(moment, line)
            self.message = {
                "id": f"{self.session['session_id']}:{line}",
                "model": self.turn_context.model if self.turn_context is not None else None,
                "text": "",
                "thinking": "",
                "tool_calls": [],
                "timestamp": moment,
            }
            turn["messages"].append(self.message)
        return self.message

    def _call(self, item: Item, moment: str | None, line: int) -> None:
        kind = item.type
        call_id = item.call_id or item.id or f"{kind}:{line}"
        arguments: Any
        if kind == "web_search_call":
            name, arguments = "web_search", item.action
        elif kind == "local_shell_call":
            name, arguments = "local_shell", item.action
        else:
            if not item.name:
                self.context.issue(line, f"{kind} without a tool name; skipped")
                return
            name = qualified_name(item.name, item.namespace)
            if kind == "custom_tool_call":
                arguments = {"input": item.input or ""}
            else:
                arguments = self._arguments(item.arguments, name, line)
        call: dict[str, Any] = {
            "id": call_id,
            "name": name,
            "input": arguments if isinstance(arguments, dict) else {"arguments": arguments},
            "timestamp": moment,
            "line": line,
        }
        self._response(moment, line)["tool_calls"].append(call)
        self.calls[call["id"]] = call

    def _arguments(self, raw: str | dict[str, Any] | None, name: str, line: int) -> Any:
        """A call's arguments: a JSON string parsed; a malformed one kept as its raw text."""
        if not isinstance(raw, str):
            return raw if raw is not None else {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.context.issue(
                line, f"the arguments of the {name} call are not valid JSON; kept as text"
            )
            return {"arguments": raw}

    def _output(self, item: Item, line: int) -> None:
        self.message = None
        call = self.calls.get(str(item.call_id))
        if call is None:
            self.context.issue(
                line, f"output for a call this rollout does not have ({item.call_id!r})"
            )
            return
        content, failed = _output_text(item.output)
        failed = failed or call["id"] in self.failed
        call["result"] = self.context.tool_result(content, failed)

    def _ended(self, end: _CallEnd) -> None:
        """An exec or patch end event: a non-zero exit code or a failed patch marks the call."""
        call_id = str(end.call_id)
        if not ((end.exit_code is not None and end.exit_code != 0) or end.success is False):
            return
        self.failed.add(call_id)
        call = self.calls.get(call_id)
        if call is not None and call.get("result") is not None:
            call["result"]["is_error"] = True

    def _usage(self, info: _TokenInfo | None) -> None:
        last = info.last_token_usage if info is not None else None
        if self.message is None or last is None:
            return
        cached = last.cached_input_tokens or 0
        self.message["usage"] = {
            "input_tokens": max((last.input_tokens or 0) - cached, 0),
            "output_tokens": last.output_tokens or 0,
            "cache_read_input_tokens": cached,
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


def _output_text(output: str | list[Any] | _OutputObject | None) -> tuple[str, bool]:
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
    if isinstance(output, _OutputObject):
        content = output.output if output.content is UNSET else output.content
        return result_text(content), output.success is False
    return result_text(output), False


def parse_codex(path: Path, data: bytes, context: ParseContext) -> dict[str, Any] | None:
    """One session from a rollout's bytes; None when it holds no turn."""
    builder = _RolloutBuilder(path, context, b'"type":"user_message"' in data)
    for line, record in iter_jsonl(data, context.file, context.issues, _read_line):
        builder.add(line, record)
    session = builder.build()
    if session is not None:
        session["issues"] = [issue.model_dump() for issue in context.issues]
    return session
