"""OTLP/JSON traces as sessions: OTel GenAI, Pydantic AI and OpenInference conventions.

Spans are grouped into sessions by conversation id (``gen_ai.conversation.id``, or
OpenInference's ``session.id``) and into turns by trace. Each chat (LLM) span is one model
response of its turn, in start order (ties: ``tsq.step.index``, then document order); the
turn's ask and catalog come from the first. Calls come from each response's output and from
``execute_tool`` / TOOL spans, which also give their results. An ``invoke_agent`` span under an
``execute_tool`` span is a subagent spawned by that call: the chat and tool spans under it
are its own. ``gen_ai.evaluation.result`` events named ``tool_selection_quality`` become
judgments of the step (chat span) or turn (root ``invoke_agent`` span) they are on. A value
that should be JSON and is not becomes an issue, and the rest of the span is still used.

Each span is read as a :class:`SpanRecord`, its attributes and events as :class:`KeyValue`
and :class:`SpanEvent`, each field declared with the type OTLP/JSON gives it: a span with a
field of the wrong type is one issue naming the span and the field, and is skipped; an
attribute or event of the wrong shape is skipped alone. Every other span still loads.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar, get_args

import msgspec
from msgspec import UNSET, UnsetType

from analysis._call_text import EXPANSION_PREFIX, render_call
from analysis._jsonio import loads_bounded
from analysis._otel_names import EVALUATION_EVENT, EVALUATION_NAME, TURN_EVENT
from analysis.catalog import tool_def_fields
from analysis.ingest._context import ParseContext
from analysis.ingest._shapes import shape_problem
from analysis.models import (
    CatalogBasis,
    EventKind,
    Judgment,
    SessionFormat,
    SubagentSource,
    ToolCall,
    Vote,
    majority_label,
)

_OPENINFERENCE_INDEX = re.compile(r"^llm\.(input_messages|output_messages|tools)\.(\d+)\.(.+)$")
_LAST = 1 << 62
_LABEL_SCORES = {"correct": 1.0, "incorrect": 0.0}


_AGENT_FORMATS = frozenset(get_args(SessionFormat)) - {"otlp"}
"""The formats a session keeps when read back from our own export (``tsq.session.format``)."""


def looks_like_otlp(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("resourceSpans"), list)


class AnyValue(msgspec.Struct):
    """An attribute's value: the first of its kinds it holds (``bytesValue`` is not read)."""

    stringValue: str | UnsetType = UNSET
    boolValue: bool | UnsetType = UNSET
    doubleValue: float | int | str | UnsetType = UNSET
    """A number, or ``"NaN"``/``"Infinity"`` as OTLP/JSON writes those."""
    intValue: int | str | UnsetType = UNSET
    """An integer, or a string holding one (OTLP/JSON's 64-bit form)."""
    arrayValue: ArrayValue | UnsetType = UNSET
    kvlistValue: KeyValueList | UnsetType = UNSET


class ArrayValue(msgspec.Struct):
    values: list[AnyValue] = []


class KeyValue(msgspec.Struct):
    """An attribute: a key and its value."""

    key: str
    value: AnyValue


class KeyValueList(msgspec.Struct):
    values: list[KeyValue] = []


class SpanEvent(msgspec.Struct):
    name: str = ""
    timeUnixNano: int | str | None = None
    attributes: Any = None
    """Read as a span's are when it is a list; an event with anything else here has none (an
    event is read for the attributes it names, and is not one of ours without them)."""


class SpanRecord(msgspec.Struct):
    """A span as OTLP/JSON writes it; what it does not name here is not read."""

    traceId: str = ""
    spanId: str = ""
    parentSpanId: str | None = None
    name: str = ""
    startTimeUnixNano: int | str | None = None
    """Nanoseconds since the epoch: an integer, or a string holding one."""
    attributes: list[Any] | None = None
    """Each entry read as a :class:`KeyValue`, so that a bad one is skipped alone."""
    events: list[Any] | None = None
    """Each entry read as a :class:`SpanEvent`, so that a bad one is skipped alone."""


class _Scope(msgspec.Struct):
    name: str | None = None


class ScopeSpans(msgspec.Struct):
    scope: _Scope | None = None
    spans: list[Any] | None = None
    """Each entry read as a :class:`SpanRecord`, so that a bad span is skipped alone."""


class ResourceSpans(msgspec.Struct):
    scopeSpans: list[Any] | None = None
    instrumentationLibrarySpans: list[Any] | None = None
    """What OTLP/JSON before 1.0 called ``scopeSpans``."""


_Shape = TypeVar("_Shape")


def _read(raw: Any, shape: type[_Shape], where: str, context: ParseContext) -> _Shape | None:
    """``raw`` as a ``shape``; None, and an issue naming ``where`` and the field, when it is
    not one."""
    try:
        return msgspec.convert(raw, shape)
    except msgspec.ValidationError as error:
        field, problem = shape_problem(error)
        context.issue(
            None, f"{where}: {field} {problem}; skipped" if field else f"{where} {problem}; skipped"
        )
        return None


def _value(value: AnyValue) -> Any:
    if value.stringValue is not UNSET:
        return value.stringValue
    if value.boolValue is not UNSET:
        return value.boolValue
    if value.doubleValue is not UNSET:
        return value.doubleValue
    if value.intValue is not UNSET:
        return _int(value.intValue)
    if value.arrayValue is not UNSET:
        return [_value(v) for v in value.arrayValue.values]
    if value.kvlistValue is not UNSET:
        return {kv.key: _value(kv.value) for kv in value.kvlistValue.values}
    return None


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _attributes(items: Any, where: str, context: ParseContext) -> dict[str, Any]:
    """A span's (or an event's) attributes, each entry read as a :class:`KeyValue`; each entry
    that is not one is an issue naming ``where``, and the others are kept."""
    if not isinstance(items, list):
        return {}
    try:
        entries = msgspec.convert(items, list[KeyValue])  # all at once when every one is good
    except msgspec.ValidationError:
        read = (_attribute(item, position, where, context) for position, item in enumerate(items))
        entries = [entry for entry in read if entry is not None]
    return {entry.key: _value(entry.value) for entry in entries}


def _attribute(item: Any, position: int, where: str, context: ParseContext) -> KeyValue | None:
    try:
        return msgspec.convert(item, KeyValue)
    except msgspec.ValidationError as error:
        field, problem = shape_problem(error)
    key = item.get("key") if isinstance(item, dict) else None
    named = f" ({key})" if isinstance(key, str) else ""
    if field.startswith("value."):  # a key with a value, the value of the wrong shape
        reason = f"{where}: attribute {position}{named}: {field} {problem}; skipped"
    else:
        reason = f"{where}: attribute {position}{named} is not a key with a value; skipped"
    context.issue(None, reason)
    return None


@dataclass(frozen=True)
class _Event:
    name: str
    attributes: dict[str, Any]
    time: int


class _Span:
    def __init__(self, raw: SpanRecord, scope: str, position: int, context: ParseContext) -> None:
        self.trace_id = raw.traceId
        self.span_id = raw.spanId
        self.parent_id = raw.parentSpanId or ""
        self.name = raw.name
        self.scope = scope
        self.position = position
        self.start = _int(raw.startTimeUnixNano)
        self.attributes = _attributes(raw.attributes, f"span {self.span_id}", context)
        self.events = []
        for number, entry in enumerate(raw.events or []):
            if not isinstance(entry, dict):
                context.issue(None, f"span {self.span_id}: an event that is not an object; skipped")
                continue
            event = _read(entry, SpanEvent, f"span {self.span_id}, event {number}", context)
            if event is None:
                continue
            attributes = _attributes(event.attributes, f"span {self.span_id}, an event", context)
            self.events.append(_Event(event.name, attributes, _int(event.timeUnixNano)))

    @property
    def operation(self) -> str:
        operation = self.attributes.get("gen_ai.operation.name")
        if isinstance(operation, str):
            return operation
        kind = self.attributes.get("openinference.span.kind")
        return {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent"}.get(str(kind), "")

    @property
    def conversation(self) -> str | None:
        for key in ("gen_ai.conversation.id", "session.id"):
            if isinstance(self.attributes.get(key), str):
                return str(self.attributes[key])
        return None

    @property
    def started(self) -> str | None:
        return _iso(self.start)


def _iso(nanos: int) -> str | None:
    return datetime.fromtimestamp(nanos / 1e9, UTC).isoformat() if nanos else None


def _spans(document: dict[str, Any], context: ParseContext) -> list[_Span]:
    spans: list[_Span] = []
    for number, entry in enumerate(document.get("resourceSpans", [])):
        resource = _read(entry, ResourceSpans, f"resourceSpans[{number}]", context)
        if resource is None:
            continue
        key = "scopeSpans" if resource.scopeSpans else "instrumentationLibrarySpans"
        listed = resource.scopeSpans or resource.instrumentationLibrarySpans or []
        for inner, scope_entry in enumerate(listed):
            where = f"resourceSpans[{number}].{key}[{inner}]"
            scope_spans = _read(scope_entry, ScopeSpans, where, context)
            if scope_spans is None:
                continue
            scope = scope_spans.scope.name if scope_spans.scope is not None else None
            for raw in scope_spans.spans or []:
                span = _span_record(raw, context)
                if span is not None:
                    spans.append(_Span(span, scope or "", len(spans), context))
    return spans


def _span_record(raw: Any, context: ParseContext) -> SpanRecord | None:
    """A span as a :class:`SpanRecord`; None, and an issue naming the span, if it is not one."""
    if not isinstance(raw, dict):
        context.issue(None, "a span that is not an object; skipped")
        return None
    span_id, name = raw.get("spanId"), raw.get("name")
    if isinstance(span_id, str) and span_id:
        named = f"span {span_id}"
    else:  # its id is what is wrong, or it has none
        named = f"a span named {name!r}" if isinstance(name, str) and name else "a span"
    return _read(raw, SpanRecord, named, context)


def _json_attribute(span: _Span, key: str, context: ParseContext) -> Any:
    value = span.attributes.get(key)
    if value is None or not isinstance(value, str):
        return value
    try:
        return loads_bounded(value)
    except json.JSONDecodeError as error:
        context.issue(None, f"span {span.span_id}: {key} is not valid JSON ({error.msg})")
        return None


def _openinference(span: _Span) -> dict[str, dict[int, dict[str, Any]]]:
    """``llm.input_messages.0.message.role`` style attributes, regrouped by list and index."""
    grouped: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for key, value in span.attributes.items():
        match = _OPENINFERENCE_INDEX.match(key)
        if match:
            listing, index, field = match.groups()
            grouped[listing].setdefault(int(index), {})[field] = value
    return grouped


def _catalog(span: _Span, context: ParseContext) -> list[dict[str, Any]] | None:
    definitions = _json_attribute(span, "gen_ai.tool.definitions", context)
    entries: list[Any] | None = definitions if isinstance(definitions, list) else None
    if entries is None:
        parameters = _json_attribute(span, "model_request_parameters", context)
        if isinstance(parameters, dict) and isinstance(parameters.get("function_tools"), list):
            entries = [
                {**tool, "parameters": tool.get("parameters_json_schema", {})}
                for tool in parameters["function_tools"]
                if isinstance(tool, dict)
            ]
    if entries is None:
        tools = _openinference(span).get("tools", {})
        entries = []
        for index in sorted(tools):
            schema = tools[index].get("tool.json_schema")
            try:
                entries.append(loads_bounded(schema) if isinstance(schema, str) else schema)
            except json.JSONDecodeError as error:
                context.issue(
                    None, f"span {span.span_id}: llm.tools.{index} is not valid JSON ({error.msg})"
                )
        entries = entries or None
    if entries is None:
        return None
    tools_out = []
    for entry in entries:
        fields = tool_def_fields(entry)
        if fields is None:
            context.issue(None, f"span {span.span_id}: a tool definition without a name; skipped")
            continue
        tools_out.append({**fields, "provenance": "trace"})
    return tools_out


def _text_of_parts(message: dict[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        return "\n".join(
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text"
        )
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _messages(span: _Span, key: str, listing: str, context: ParseContext) -> list[dict[str, Any]]:
    value = _json_attribute(span, key, context)
    if isinstance(value, list):
        return [m for m in value if isinstance(m, dict)]
    grouped = _openinference(span).get(listing, {})
    return [
        {
            "role": grouped[i].get("message.role"),
            "content": grouped[i].get("message.content"),
            "tool_calls": _openinference_calls(grouped[i]),
        }
        for i in sorted(grouped)
    ]


def _openinference_calls(fields: dict[str, Any]) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = defaultdict(dict)
    pattern = re.compile(r"^message\.tool_calls\.(\d+)\.tool_call\.(.+)$")
    for key, value in fields.items():
        match = pattern.match(key)
        if match:
            calls[int(match.group(1))][match.group(2)] = value
    return [calls[i] for i in sorted(calls)]


def _calls_from_output(
    messages: list[dict[str, Any]], span: _Span, context: ParseContext
) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for message in messages:
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                arguments = part.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = loads_bounded(arguments)
                    except json.JSONDecodeError:
                        context.issue(
                            None, f"span {span.span_id}: tool call arguments are not valid JSON"
                        )
                        arguments = {"_raw": arguments}
                calls.append(
                    {
                        "id": str(part.get("id") or f"{span.span_id}-{len(calls)}"),
                        "name": str(part.get("name")),
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
        for raw in message.get("tool_calls") or []:
            arguments = raw.get("function.arguments")
            try:
                parsed = loads_bounded(arguments) if isinstance(arguments, str) else {}
            except json.JSONDecodeError:
                context.issue(None, f"span {span.span_id}: tool call arguments are not valid JSON")
                parsed = {"_raw": arguments}
            calls.append(
                {
                    "id": str(raw.get("id") or f"{span.span_id}-{len(calls)}"),
                    "name": str(raw.get("function.name")),
                    "input": parsed if isinstance(parsed, dict) else {},
                }
            )
    return calls


def _ask_of(message: dict[str, Any]) -> tuple[str, str | None]:
    """The user's words, and a slash command's expansion when our export gave it a part."""
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        notes = [t for t in texts[1:] if t.startswith(EXPANSION_PREFIX) and t.endswith(")")]
        if texts and notes:
            return texts[0], notes[0][len(EXPANSION_PREFIX) : -1]
    return _text_of_parts(message), None


def _strip_rendered_calls(text: str, calls: list[dict[str, Any]]) -> str:
    """Our own exports end a response's text with its calls rendered (default render
    options), one a line; take them back out. Text that does not end that way (other
    producers') is kept as it is."""
    if not calls:
        return text
    rendered = "\n".join(render_call(ToolCall.model_validate(call)) for call in calls)
    if text == rendered:
        return ""
    return text[: -len(rendered) - 1] if text.endswith(f"\n{rendered}") else text


def _step_order(span: _Span) -> tuple[int, int, int]:
    step = span.attributes.get("tsq.step.index")
    return span.start, step if isinstance(step, int) else _LAST, span.position


def _score(attributes: dict[str, Any]) -> float | None:
    """The event's score from 0 to 1: its value, else its label (correct / incorrect)."""
    value = attributes.get("gen_ai.evaluation.score.value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        score: float | None = float(value)
    else:
        label = attributes.get("gen_ai.evaluation.score.label")
        score = _LABEL_SCORES.get(label.lower()) if isinstance(label, str) else None
    return score if score is not None and 0 <= score <= 1 else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) and value else default


@dataclass(frozen=True)
class _Step:
    """Where a judged span sits: its turn's step, or the whole turn (``index`` None)."""

    index: int | None = None
    message_id: str | None = None
    parent_call_id: str | None = None


class _Turn:
    """One trace rebuilt as a turn: its runs (the turn's own, and each subagent's) as steps."""

    def __init__(
        self, spans: list[_Span], session_id: str, index: int, context: ParseContext
    ) -> None:
        self.session_id, self.index, self.context = session_id, index, context
        self.by_id = {span.span_id: span for span in spans if span.span_id}
        self.judgments: list[Judgment] = []
        self.catalogs: dict[int, list[dict[str, Any]] | None] = {}
        self.chats: dict[str, list[_Span]] = defaultdict(list)
        self.tools: dict[str, list[_Span]] = defaultdict(list)
        self.spawned: dict[str, _Span] = {}
        self.roots: list[_Span] = []
        for span in sorted(spans, key=_step_order):
            self._place(span)

    def _place(self, span: _Span) -> None:
        if span.operation == "chat":
            self.chats[self._run_of(span)].append(span)
        elif span.operation == "execute_tool":
            self.tools[self._run_of(span)].append(span)
        elif span.operation == "invoke_agent":
            spawner = self._spawner(span)
            if spawner is not None:
                self.spawned.setdefault(spawner.span_id, span)
            elif self._run_of(span) == "":
                self.roots.append(span)

    def _ancestors(self, span: _Span) -> Iterator[_Span]:
        seen = {span.span_id}
        parent = self.by_id.get(span.parent_id)
        while parent is not None and parent.span_id not in seen:
            seen.add(parent.span_id)
            yield parent
            parent = self.by_id.get(parent.parent_id)

    def _spawner(self, agent: _Span) -> _Span | None:
        """The ``execute_tool`` span an ``invoke_agent`` span runs under, if it is a subagent."""
        for ancestor in self._ancestors(agent):
            if ancestor.operation == "execute_tool":
                return ancestor
            if ancestor.operation == "invoke_agent":
                return None
        return None

    def _run_of(self, span: _Span) -> str:
        """The span id of the subagent run ``span`` belongs to; "" for the turn's own run."""
        for ancestor in self._ancestors(span):
            if ancestor.operation == "invoke_agent" and self._spawner(ancestor) is not None:
                return ancestor.span_id
        return ""

    def first_chat(self) -> _Span | None:
        """The turn's first model response: its ask and menu are the turn's."""
        return next(iter(self.chats.get("", [])), None)

    def catalog_of(self, span: _Span | None) -> list[dict[str, Any]] | None:
        """The menu a span carries, read once per span (so a bad one is one issue)."""
        if span is None:
            return None
        if span.position not in self.catalogs:
            self.catalogs[span.position] = _catalog(span, self.context)
        return self.catalogs[span.position]

    def messages(self, run: str, parent_call_id: str | None) -> list[dict[str, Any]]:
        """The responses of one run, in order, with their calls, results and subagents."""
        chats = self.chats.get(run, [])
        messages = []
        for position, span in enumerate(chats):
            message = self._message(span)
            messages.append(message)
            self._judge(span, _Step(position, message["id"], parent_call_id))
        calls = {call["id"]: call for message in messages for call in message["tool_calls"]}
        for tool in self.tools.get(run, []):
            call = self._call(tool, calls, chats, messages)
            agent = self.spawned.get(tool.span_id)
            if agent is not None:
                call["subagent"] = self._subagent(agent, call["id"])
        return messages

    def _message(self, span: _Span) -> dict[str, Any]:
        outputs = _messages(span, "gen_ai.output.messages", "output_messages", self.context)
        calls = _calls_from_output(outputs, span, self.context)
        text = _strip_rendered_calls("\n".join(_text_of_parts(m) for m in outputs), calls)
        model = span.attributes.get("gen_ai.request.model") or span.attributes.get("llm.model_name")
        return {
            "id": _text(span.attributes.get("gen_ai.response.id"), span.span_id),
            "model": model if isinstance(model, str) else None,
            "text": text,
            "tool_calls": calls,
            "timestamp": span.started,
        }

    def _call(
        self,
        span: _Span,
        calls: dict[str, dict[str, Any]],
        chats: list[_Span],
        messages: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """The call a tool span ran, with its result: one a response named, or a new one
        given to the latest response before it (to a response of its own when none was)."""
        call_id = str(span.attributes.get("gen_ai.tool.call.id") or span.span_id)
        call = calls.get(call_id)
        if call is None:
            arguments = _json_attribute(span, "gen_ai.tool.call.arguments", self.context)
            call = {
                "id": call_id,
                "name": str(span.attributes.get("gen_ai.tool.name") or span.name),
                "input": arguments if isinstance(arguments, dict) else {},
            }
            calls[call_id] = call
            if not messages:
                messages.append({"id": f"{span.trace_id}-0", "tool_calls": []})
            before = [i for i, chat in enumerate(chats) if chat.start <= span.start]
            messages[before[-1] if before else 0]["tool_calls"].append(call)
        result = span.attributes.get("gen_ai.tool.call.result", span.attributes.get("output.value"))
        if result is not None:
            call["result"] = self.context.tool_result(
                result if isinstance(result, str) else json.dumps(result),
                span.attributes.get("tsq.tool.call.is_error") is True,
            )
            cut = span.attributes.get("tsq.tool.call.result.truncated_from")
            if isinstance(cut, int) and "truncated_from" not in call["result"]:
                call["result"]["truncated_from"] = cut
        return call

    def _subagent(self, agent: _Span, call_id: str) -> dict[str, Any]:
        messages = self.messages(agent.span_id, call_id)
        user = self._last_user(agent, next(iter(self.chats.get(agent.span_id, [])), None))
        source = agent.attributes.get("tsq.subagent.source")
        agent_id = agent.attributes.get("gen_ai.agent.id")
        return {
            "agent_id": agent_id if isinstance(agent_id, str) else None,
            "source": source if source in get_args(SubagentSource) else "sidechain",
            "prompt": _text_of_parts(user) if user is not None else "",
            "messages": messages,
        }

    def _last_user(self, *spans: _Span | None) -> dict[str, Any] | None:
        """The last user message of the first of ``spans`` that was given one."""
        for span in spans:
            if span is None:
                continue
            inputs = _messages(span, "gen_ai.input.messages", "input_messages", self.context)
            users = [m for m in inputs if m.get("role") == "user"]
            if users:
                return users[-1]
        return None

    def ask(self) -> tuple[str, str | None]:
        """What the first response was asked; in a turn with no response, the root span."""
        user = self._last_user(self.first_chat(), *self.roots)
        return _ask_of(user) if user is not None else ("", None)

    def events(self) -> list[dict[str, Any]]:
        """Turn events (``tsq.turn.event``) and turn-level judgments from the root spans."""

        events = []
        for root in self.roots:
            self._judge(root, _Step())
            for event in root.events:
                if event.name != TURN_EVENT:
                    continue
                kind = event.attributes.get("tsq.turn.event.kind")
                if kind not in get_args(EventKind):
                    self.context.issue(
                        None, f"span {root.span_id}: a turn event of unknown kind {kind!r}; skipped"
                    )
                    continue
                text = event.attributes.get("tsq.turn.event.text")
                events.append(
                    {
                        "kind": kind,
                        "text": text if isinstance(text, str) else "",
                        "timestamp": _iso(event.time),
                    }
                )
        return events

    def _judge(self, span: _Span, step: _Step) -> None:
        """Each ``tool_selection_quality`` evaluation event on ``span`` as a judgment."""

        for event in span.events:
            name = event.attributes.get("gen_ai.evaluation.name")
            if event.name != EVALUATION_EVENT or str(name).lower() != EVALUATION_NAME:
                continue
            score = _score(event.attributes)
            if score is None:
                self.context.issue(
                    None,
                    f"span {span.span_id}: a {EVALUATION_NAME} evaluation without a score "
                    "from 0 to 1 (value, or label correct/incorrect); skipped",
                )
                continue
            self.judgments.append(self._judgment(event.attributes, score, span, step))

    def _judgment(
        self, attributes: dict[str, Any], score: float, span: _Span, step: _Step
    ) -> Judgment:
        explanation = attributes.get("gen_ai.evaluation.explanation")
        requested = _count(attributes.get("tsq.evaluation.votes.requested"))
        valid = min(_count(attributes.get("tsq.evaluation.votes.valid")), requested)
        catalog = self.catalog_of(span if step.index is not None else self.first_chat())
        return Judgment(
            session_id=self.session_id,
            turn_index=self.index,
            step_index=step.index,
            message_id=step.message_id,
            parent_call_id=step.parent_call_id,
            score=score,
            votes=[
                Vote(
                    verdict=majority_label(score),
                    reasoning=explanation if isinstance(explanation, str) else "",
                )
            ],
            n_requested=requested,
            n_valid=valid,
            n_discarded=requested - valid,
            model=_text(attributes.get("tsq.evaluation.model"), "external"),
            judge_id=_text(attributes.get("tsq.evaluation.judge_id"), "") or None,
            spec_name=_text(attributes.get("tsq.evaluation.spec_name"), "external"),
            condition="full",
            catalog_size=len(catalog or []),
            call_rendered=True,
            context_chars=0,
        )


def _turn_order(spans: list[_Span]) -> tuple[int, int]:
    indexes = [s.attributes.get("tsq.turn.index") for s in spans]
    index = next((i for i in indexes if isinstance(i, int)), _LAST)
    return index, min(s.start for s in spans)


def _rebuilt(basis: Any) -> bool:
    """A menu the exporter built for a session that carried none (a basis other than trace)."""
    return basis in get_args(CatalogBasis) and basis != "trace"


def _catalog_source(span: _Span, file: str) -> str:
    """Where a turn's menu came from; an exported baseline menu says so."""
    basis = span.attributes.get("tsq.catalog.basis")
    exported = f"; the {basis} menu when exported" if _rebuilt(basis) else ""
    return f"{file} (span {span.span_id}{exported})"


def _turn(
    spans: list[_Span], session_id: str, index: int, context: ParseContext
) -> tuple[dict[str, Any], dict[str, Any] | None, list[Judgment]]:
    """One trace as a turn, its catalog (if its first response carried one), its judgments."""
    built = _Turn(spans, session_id, index, context)
    ask, expanded = built.ask()
    turn = {
        "index": index,
        "ask": ask,
        "expanded_prompt": expanded,
        "command": ask.split()[0] if expanded and ask.startswith("/") else None,
        "timestamp": min(spans, key=lambda s: s.start).started,
        "messages": built.messages("", None),
        "events": built.events(),
    }
    first = built.first_chat()
    tools = built.catalog_of(first)
    catalog = None
    if first is not None and tools is not None:
        source = _catalog_source(first, context.file)
        # The menu a model call was made with is the menu of its turn, not a later capture.
        catalog = {"tools": tools, "source": source, "captured_at": turn["timestamp"]}
        basis = first.attributes.get("tsq.catalog.basis")
        if _rebuilt(basis):
            catalog["exported_basis"] = basis
    return turn, catalog, built.judgments


def parse_otlp(
    document: dict[str, Any], context: ParseContext
) -> tuple[list[dict[str, Any]], list[Judgment]]:
    """Sessions (as dicts ready for validation) and judgments from one OTLP/JSON document."""
    by_trace: dict[str, list[_Span]] = defaultdict(list)
    for span in _spans(document, context):
        by_trace[span.trace_id].append(span)
    by_session: dict[str, list[list[_Span]]] = defaultdict(list)
    for trace_id, spans in by_trace.items():
        conversation = next((s.conversation for s in spans if s.conversation), None)
        by_session[conversation or f"trace-{trace_id}"].append(spans)
    sessions, judgments = [], []
    for session_id, traces in by_session.items():
        turns, catalogs = [], []
        for index, spans in enumerate(sorted(traces, key=_turn_order)):
            turn, catalog, judged = _turn(spans, session_id, index, context)
            if catalog is not None:
                catalogs.append(catalog)
                turn["catalog_index"] = len(catalogs) - 1
            turns.append(turn)
            judgments.extend(judged)
        formats = [s.attributes.get("tsq.session.format") for spans in traces for s in spans]
        fmt = next((f for f in formats if f), None)
        sessions.append(
            {
                "session_id": session_id,
                "source": context.file,
                "format": fmt if fmt in _AGENT_FORMATS else "otlp",
                "turns": turns,
                "catalogs": catalogs,
                "issues": [],
            }
        )
    if sessions:  # the document's issues, once
        sessions[0]["issues"] = [issue.model_dump() for issue in context.issues]
    return sessions, judgments
