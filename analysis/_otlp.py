"""Sessions as OpenTelemetry GenAI spans, in the Pydantic AI convention evaluation platforms read.

Each turn becomes one trace: an ``invoke_agent`` root, a ``chat`` span carrying what the
judge reads (the rendered ask, the whole catalog, the output with the chosen calls), and one
``execute_tool`` span per call. Spans are built with the OpenTelemetry SDK and encoded with
its OTLP encoder; ids are derived from (session id, turn index, position), so exporting the
same session twice gives the same ids and a platform can de-duplicate.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from ._models import Session, ToolCall, ToolCatalog, Turn
from ._render import RenderedTurn, RenderOptions, expansion_note, render_turn

PYDANTIC_AI_SCOPE = "pydantic-ai"
WORKBENCH_SCOPE = "tsq-workbench"
AGENT_NAME = {"claude-code": "claude-code", "claude-code-legacy": "claude-code"}
PROVIDER = {"claude-code": "anthropic", "claude-code-legacy": "anthropic", "openai": "openai"}
_JSON_ATTRIBUTES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.definitions",
    "model_request_parameters",
)


class _DerivedIds(IdGenerator):
    """Hands out the ids set for the next span, so ids depend on content, not on chance."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()


def trace_id_for(session_id: str, turn_index: int) -> int:
    return int.from_bytes(_digest("trace", session_id, turn_index)[:16], "big") or 1


def span_id_for(session_id: str, turn_index: int, position: int) -> int:
    return int.from_bytes(_digest("span", session_id, turn_index, position)[:8], "big") or 1


def _nanos(moment: datetime | None, fallback: int) -> int:
    return int(moment.timestamp() * 1e9) if moment is not None else fallback


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def _function_tools(catalog_tools: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": tool.name,
            "description": tool.description or "",
            "parameters_json_schema": tool.parameters,
        }
        for tool in catalog_tools
    ]


def _tool_definitions(rendered: RenderedTurn) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.parameters,
        }
        for tool in rendered.tools
    ]


def _call_part(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.input}


def chat_attributes(session: Session, turn: Turn, rendered: RenderedTurn) -> dict[str, Any]:
    """Attributes of the chat span: what an evaluation platform's judge reads."""
    model = next((m.model for m in turn.messages if m.model), None) or "unknown"
    calls = list(turn.tool_calls()) if rendered.call_rendered else []
    input_messages = []
    if rendered.prior_context:
        input_messages.append(
            {
                "role": "system",
                "parts": [
                    {
                        "type": "text",
                        "content": f"Prior context (earlier turns):\n{rendered.prior_context}",
                    }
                ],
            }
        )
    user_parts = [{"type": "text", "content": turn.ask}]
    note = expansion_note(turn)
    if note:
        user_parts.append({"type": "text", "content": note})
    input_messages.append({"role": "user", "parts": user_parts})
    output_parts: list[dict[str, Any]] = []
    if rendered.output:
        output_parts.append({"type": "text", "content": rendered.output})
    output_parts.extend(_call_part(call) for call in calls)
    output_messages = [
        {
            "role": "assistant",
            "parts": output_parts,
            "finish_reason": "tool_call" if calls else "stop",
        }
    ]
    request_parameters = {
        "function_tools": _function_tools(rendered.tools),
        "output_tools": [],
        "allow_text_output": True,
    }
    schema = {"type": "object", "properties": {key: {"type": "object"} for key in _JSON_ATTRIBUTES}}
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER.get(session.format, "unknown"),
        "gen_ai.system": PROVIDER.get(session.format, "unknown"),
        "gen_ai.request.model": model,
        "gen_ai.conversation.id": session.session_id,
        "gen_ai.input.messages": _json(input_messages),
        "gen_ai.output.messages": _json(output_messages),
        "gen_ai.tool.definitions": _json(_tool_definitions(rendered)),
        "model_request_parameters": _json(request_parameters),
        "logfire.json_schema": _json(schema),
        "logfire.msg": f"chat {model}",
        "logfire.span_type": "span",
        "tsq.turn.index": turn.index,
        "tsq.catalog.basis": rendered.catalog_basis,
        "tsq.catalog.source": rendered.catalog_note,
    }


def _tool_attributes(session: Session, call: ToolCall) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.conversation.id": session.session_id,
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.call.arguments": _json(call.input),
    }
    if call.result is not None:
        attributes["gen_ai.tool.call.result"] = call.result.content
        attributes["tsq.tool.call.is_error"] = call.result.is_error
    return attributes


class SpanBuilder:
    """Builds the spans of many sessions with one tracer provider."""

    def __init__(self, live: ToolCatalog | None = None, options: RenderOptions | None = None):
        self.live = live
        self.options = options
        self.ids = _DerivedIds()
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(
            id_generator=self.ids, resource=Resource({"service.name": WORKBENCH_SCOPE})
        )
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.agent_tracer = provider.get_tracer(WORKBENCH_SCOPE)
        self.chat_tracer = provider.get_tracer(PYDANTIC_AI_SCOPE)

    def add_session(self, session: Session) -> None:
        for turn in session.turns:
            self._add_turn(session, turn)

    def _start(self, tracer: trace.Tracer, name: str, parent: Any, position: int, **kw: Any) -> Any:
        self.ids.span_id = span_id_for(self._session_id, self._turn_index, position)
        context = trace.set_span_in_context(parent) if parent is not None else None
        return tracer.start_span(name, context=context, **kw)

    def _add_turn(self, session: Session, turn: Turn) -> None:
        self._session_id, self._turn_index = session.session_id, turn.index
        self.ids.trace_id = trace_id_for(session.session_id, turn.index)
        rendered = render_turn(session, turn, "full", self.live, self.options)
        start = _nanos(turn.timestamp, turn.index * 1_000_000_000)
        calls = list(turn.tool_calls())
        end = max([start + 1, *(_nanos(c.timestamp, start) + 1 for c in calls)])
        agent = AGENT_NAME.get(session.format, "agent")
        root = self._start(
            self.agent_tracer,
            f"invoke_agent {agent}",
            None,
            0,
            start_time=start,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "gen_ai.conversation.id": session.session_id,
                "tsq.turn.index": turn.index,
                "tsq.session.source": session.source,
                "tsq.session.format": session.format,
            },
        )
        attributes = chat_attributes(session, turn, rendered)
        chat = self._start(
            self.chat_tracer,
            f"chat {attributes['gen_ai.request.model']}",
            root,
            1,
            kind=trace.SpanKind.CLIENT,
            start_time=start,
            attributes=attributes,
        )
        chat.end(end_time=end)
        for position, call in enumerate(calls, start=2):
            at = _nanos(call.timestamp, start)
            span = self._start(
                self.agent_tracer,
                f"execute_tool {call.name}",
                root,
                position,
                start_time=at,
                attributes=_tool_attributes(session, call),
            )
            if call.result is not None and call.result.is_error:
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            span.end(end_time=at + 1)
        root.end(end_time=end)

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()


def export_request(
    sessions: Iterable[Session],
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
) -> ExportTraceServiceRequest:
    """The OTLP request (protobuf message) for ``sessions``."""
    builder = SpanBuilder(live, options)
    for session in sessions:
        builder.add_session(session)
    return encode_spans(builder.spans())


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON spells trace and span ids as hex, where protobuf's JSON mapping uses base64."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex() if key in _ID_KEYS and value else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def request_to_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP/JSON (``{"resourceSpans": …}``) for a protobuf request."""
    document: dict[str, Any] = _hex_ids(MessageToDict(request, use_integers_for_enums=True))
    return document


def export_otlp_json(
    sessions: Iterable[Session],
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
) -> dict[str, Any]:
    return request_to_otlp_json(export_request(sessions, live, options))
