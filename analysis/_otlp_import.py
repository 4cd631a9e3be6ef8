"""OTLP/JSON traces as sessions: OTel GenAI, Pydantic AI and OpenInference conventions.

Spans are grouped into sessions by conversation id (``gen_ai.conversation.id``, or
OpenInference's ``session.id``) and into turns by trace. A turn's ask, output, tool calls and
catalog come from its model span; results come from ``execute_tool`` / TOOL spans. A value
that should be JSON and is not becomes an issue, and the rest of the span is still used.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from ._catalog import tool_def_fields
from ._context import ParseContext
from ._models import ToolCall
from ._render import EXPANSION_PREFIX, render_call

_OPENINFERENCE_INDEX = re.compile(r"^llm\.(input_messages|output_messages|tools)\.(\d+)\.(.+)$")


def looks_like_otlp(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("resourceSpans"), list)


def _value(node: Any) -> Any:
    if not isinstance(node, dict):
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in node:
            return node[key]
    if "intValue" in node:
        return int(node["intValue"])
    if "arrayValue" in node:
        return [_value(v) for v in node["arrayValue"].get("values", [])]
    if "kvlistValue" in node:
        return {kv["key"]: _value(kv.get("value")) for kv in node["kvlistValue"].get("values", [])}
    return None


class _Span:
    def __init__(self, raw: dict[str, Any], scope: str) -> None:
        self.trace_id = str(raw.get("traceId", ""))
        self.span_id = str(raw.get("spanId", ""))
        self.parent_id = str(raw.get("parentSpanId", "") or "")
        self.name = str(raw.get("name", ""))
        self.scope = scope
        self.start = int(raw.get("startTimeUnixNano", 0) or 0)
        self.attributes = {
            a["key"]: _value(a.get("value")) for a in raw.get("attributes", []) if "key" in a
        }

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
        if not self.start:
            return None
        return datetime.fromtimestamp(self.start / 1e9, UTC).isoformat()


def _spans(document: dict[str, Any]) -> list[_Span]:
    spans: list[_Span] = []
    for resource in document.get("resourceSpans", []):
        for scope_spans in resource.get("scopeSpans", []) or resource.get(
            "instrumentationLibrarySpans", []
        ):
            scope = str((scope_spans.get("scope") or {}).get("name", ""))
            spans.extend(_Span(raw, scope) for raw in scope_spans.get("spans", []))
    return spans


def _json_attribute(span: _Span, key: str, context: ParseContext) -> Any:
    value = span.attributes.get(key)
    if value is None or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
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
                entries.append(json.loads(schema) if isinstance(schema, str) else schema)
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
                        arguments = json.loads(arguments)
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
                parsed = json.loads(arguments) if isinstance(arguments, str) else {}
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
    """Our own exports render each call into the output text; take those lines back out."""
    rendered = {render_call(ToolCall.model_validate(call)) for call in calls}
    return "\n".join(line for line in text.splitlines() if line not in rendered)


def _turn(spans: list[_Span], index: int, context: ParseContext) -> tuple[dict[str, Any], Any]:
    model_span = next((s for s in spans if s.operation == "chat"), None)
    tool_spans = [s for s in spans if s.operation == "execute_tool"]
    ask, text, model, calls, catalog = "", "", None, [], None
    expanded: str | None = None
    if model_span is not None:
        inputs = _messages(model_span, "gen_ai.input.messages", "input_messages", context)
        users = [m for m in inputs if m.get("role") == "user"]
        ask, expanded = _ask_of(users[-1]) if users else ("", None)
        outputs = _messages(model_span, "gen_ai.output.messages", "output_messages", context)
        calls = _calls_from_output(outputs, model_span, context)
        text = _strip_rendered_calls("\n".join(_text_of_parts(m) for m in outputs), calls)
        model = model_span.attributes.get("gen_ai.request.model") or model_span.attributes.get(
            "llm.model_name"
        )
        catalog = _catalog(model_span, context)
    known = {call["id"] for call in calls}
    for span in tool_spans:
        call_id = span.attributes.get("gen_ai.tool.call.id") or span.span_id
        if call_id not in known:
            arguments = _json_attribute(span, "gen_ai.tool.call.arguments", context)
            calls.append(
                {
                    "id": str(call_id),
                    "name": str(span.attributes.get("gen_ai.tool.name") or span.name),
                    "input": arguments if isinstance(arguments, dict) else {},
                }
            )
            known.add(str(call_id))
        result = span.attributes.get("gen_ai.tool.call.result", span.attributes.get("output.value"))
        if result is not None:
            call = next(c for c in calls if c["id"] == str(call_id))
            call["result"] = context.tool_result(
                result if isinstance(result, str) else json.dumps(result),
                span.attributes.get("tsq.tool.call.is_error") is True,
            )
    first = min(spans, key=lambda s: s.start)
    message = {
        "id": f"{first.trace_id}-0",
        "model": model if isinstance(model, str) else None,
        "text": text,
        "tool_calls": calls,
    }
    turn = {
        "index": index,
        "ask": ask,
        "expanded_prompt": expanded,
        "command": ask.split()[0] if expanded and ask.startswith("/") else None,
        "timestamp": first.started,
        "messages": [message] if text or calls else [],
    }
    captured = model_span.started if model_span else None
    return turn, (catalog, captured, model_span)


def _turn_order(spans: list[_Span]) -> tuple[int, int]:
    indexes = [s.attributes.get("tsq.turn.index") for s in spans]
    index = next((i for i in indexes if isinstance(i, int)), 1 << 62)
    return index, min(s.start for s in spans)


def parse_otlp(document: dict[str, Any], context: ParseContext) -> list[dict[str, Any]]:
    """Sessions (as dicts ready for validation) from one OTLP/JSON document."""
    by_trace: dict[str, list[_Span]] = defaultdict(list)
    for span in _spans(document):
        by_trace[span.trace_id].append(span)
    by_session: dict[str, list[list[_Span]]] = defaultdict(list)
    for trace_id, spans in by_trace.items():
        conversation = next((s.conversation for s in spans if s.conversation), None)
        by_session[conversation or f"trace-{trace_id}"].append(spans)
    sessions = []
    for session_id, traces in by_session.items():
        turns, catalogs = [], []
        for index, spans in enumerate(sorted(traces, key=_turn_order)):
            turn, (catalog, captured, model_span) = _turn(spans, index, context)
            if catalog is not None:
                source = (
                    f"{context.file} (span {model_span.span_id})" if model_span else context.file
                )
                catalogs.append({"tools": catalog, "source": source, "captured_at": captured})
                turn["catalog_index"] = len(catalogs) - 1
            turns.append(turn)
        formats = [s.attributes.get("tsq.session.format") for spans in traces for s in spans]
        fmt = next((f for f in formats if f), None)
        sessions.append(
            {
                "session_id": session_id,
                "source": context.file,
                "format": fmt if fmt in ("claude-code", "claude-code-legacy", "openai") else "otlp",
                "turns": turns,
                "catalogs": catalogs,
                "issues": [],
            }
        )
    if sessions:  # the document's issues, once
        sessions[0]["issues"] = [issue.model_dump() for issue in context.issues]
    return sessions
