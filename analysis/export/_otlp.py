"""Sessions as OpenTelemetry GenAI spans, in the Pydantic AI convention evaluation platforms read.

Each turn becomes one trace: an ``invoke_agent`` root and, inside it, one ``chat`` span per
model response (a *step*, what chose the tools) carrying what the judge reads for that step,
with one ``execute_tool`` span per call. A call that spawned a subagent holds a nested
``invoke_agent`` span with the subagent's own chat and tool spans. Judgments travel as
``gen_ai.evaluation.result`` events on the spans they judged. Spans are built with the
OpenTelemetry SDK and encoded with its OTLP encoder; ids are derived from (session id, turn
index, position in the turn), so exporting the same session twice gives the same ids and a
platform can de-duplicate.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from analysis._call_text import expansion_note
from analysis._otel_names import (
    EVALUATION_EVENT,
    EVALUATION_NAME,
    PYDANTIC_AI_SCOPE,
    TURN_EVENT,
    WORKBENCH_SCOPE,
)
from analysis.models import (
    AssistantMessage,
    Judgment,
    Session,
    StepKey,
    SubagentRun,
    ToolCall,
    ToolCatalog,
    Turn,
    Vote,
)
from analysis.render import JudgeInput, RenderOptions, find_step, render_step

AGENT_NAME = {"claude-code": "claude-code", "claude-code-legacy": "claude-code", "codex": "codex"}
PROVIDER = {
    "claude-code": "anthropic",
    "claude-code-legacy": "anthropic",
    "codex": "openai",
    "openai": "openai",
}
_JSON_ATTRIBUTES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.definitions",
    "model_request_parameters",
)
_NO_LIMIT = SpanLimits(
    max_events=SpanLimits.UNSET,
    max_attribute_length=SpanLimits.UNSET,
    max_span_attribute_length=SpanLimits.UNSET,
)
"""Whatever ``OTEL_*_LIMIT`` variables say, an export drops and cuts nothing."""


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


def span_id_for(session_id: str, turn_index: int, position: str) -> int:
    """``position`` is the span's path in its turn: ``agent``, then ``/step`` and ``/call``
    indexes down to it (``agent/3/1/agent/0`` is the first step of the subagent spawned by
    the second call of step 3), so every span of a turn has its own."""
    return int.from_bytes(_digest("span", session_id, turn_index, position)[:8], "big") or 1


def _nanos(moment: datetime | None, fallback: int) -> int:
    return int(moment.timestamp() * 1e9) if moment is not None else fallback


class _Clock:
    """Start times of one run's spans, in the order they are emitted.

    Each span starts at the moment the transcript records for it, but never before the span
    emitted just before it in the same run (ties move on by 1 ns): the order of a run's
    steps and calls is the order of their start times. Runs keep separate clocks, so
    subagents that ran in parallel keep their own times.
    """

    def __init__(self, start: int) -> None:
        self.now = start

    def at(self, moment: datetime | None) -> int:
        self.now = max(_nanos(moment, self.now + 1), self.now + 1)
        return self.now


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


def _tool_definitions(rendered: JudgeInput) -> list[dict[str, Any]]:
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


def _text_message(role: str, *texts: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text} for text in texts]}


def _ask_message(turn: Turn) -> dict[str, Any]:
    """The user's words in full, and a slash command's expansion as a part of its own."""
    note = expansion_note(turn)
    return _text_message("user", turn.ask, *([note] if note else []))


def _input_messages(turn: Turn, rendered: JudgeInput, spawned: bool) -> list[dict[str, Any]]:
    """Prior context (``system``), the ask (``user``), then the turn so far (``system``).

    The ask is the user's words in full (a subagent's step: its prompt and the call that
    spawned it, as the judge reads them); context and trajectory are as the judge reads them.
    """
    messages = []
    if rendered.prior_context:
        messages.append(
            _text_message("system", f"Prior context (earlier turns):\n{rendered.prior_context}")
        )
    messages.append(_text_message("user", rendered.ask) if spawned else _ask_message(turn))
    if rendered.trajectory:
        messages.append(
            _text_message(
                "system", f"This turn so far (earlier steps, oldest first):\n{rendered.trajectory}"
            )
        )
    return messages


def _output_text(messages: list[AssistantMessage], rendered: JudgeInput) -> str:
    """What the model said, each call rendered inline after the text of its response.

    A step's output is given whole (the judge's copy may be cut to fit its budget: the cuts
    are listed in ``tsq.step.cuts``), so an import gets the response back exactly.
    """
    if rendered.step_index is None:
        return rendered.output
    said = [message.text for message in messages if message.text]
    return "\n".join([*said, *(rendered.rendered_calls if rendered.call_rendered else [])])


def chat_attributes(session: Session, turn: Turn, rendered: JudgeInput) -> dict[str, Any]:
    """Attributes of a chat span: what an evaluation platform's judge reads.

    ``rendered`` is one step (:func:`render_step`): the span of that model response; or a
    whole turn (:func:`render_turn`), as the Catalog page shows it.
    """
    step = None
    if rendered.step_index is not None:
        step = find_step(turn, rendered.step_index, rendered.parent_call_id)
    messages = [step.message] if step is not None else turn.messages
    model = next((m.model for m in messages if m.model), None)
    name = f"chat {model}" if model else "chat"  # OTel GenAI span name; no model, no suffix
    calls = [c for m in messages for c in m.tool_calls] if rendered.call_rendered else []
    output_parts: list[dict[str, Any]] = []
    output = _output_text(messages, rendered)
    if output:
        output_parts.append({"type": "text", "content": output})
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
    spawned = step is not None and step.parent_call is not None
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER.get(session.format, "unknown"),
        "gen_ai.system": PROVIDER.get(session.format, "unknown"),
        "gen_ai.conversation.id": session.session_id,
        "gen_ai.input.messages": _json(_input_messages(turn, rendered, spawned)),
        "gen_ai.output.messages": _json(output_messages),
        "gen_ai.tool.definitions": _json(_tool_definitions(rendered)),
        "model_request_parameters": _json(request_parameters),
        "logfire.json_schema": _json(schema),
        "logfire.msg": name,
        "logfire.span_type": "span",
        "tsq.turn.index": turn.index,
        "tsq.catalog.basis": rendered.catalog_basis,
        "tsq.catalog.source": rendered.catalog_note,
    }
    if model:
        attributes["gen_ai.request.model"] = model
    if step is not None:
        attributes["tsq.step.index"] = step.index
        attributes["gen_ai.response.id"] = step.message_id
    if rendered.cuts:
        attributes["tsq.step.cuts"] = rendered.cuts
    return attributes


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
        if call.result.truncated_from is not None:
            attributes["tsq.tool.call.result.truncated_from"] = call.result.truncated_from
    return attributes


def _subagent_attributes(session: Session, call: ToolCall, run: SubagentRun) -> dict[str, Any]:
    kind = call.input.get("subagent_type")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": kind if isinstance(kind, str) and kind else "subagent",
        "gen_ai.conversation.id": session.session_id,
        "gen_ai.input.messages": _json([_text_message("user", run.prompt)]),
        "tsq.subagent.source": run.source,
    }
    if run.agent_id:
        attributes["gen_ai.agent.id"] = run.agent_id
    return attributes


def _majority_reasoning(votes: Sequence[Vote]) -> str | None:
    """The first reasoning that agrees with the most common verdict (on a tie, the first's)."""
    if not votes:
        return None
    majority = Counter(vote.verdict for vote in votes).most_common(1)[0][0]
    return next(vote.reasoning for vote in votes if vote.verdict == majority)


def evaluation_attributes(judgment: Judgment, message_id: str | None) -> dict[str, Any] | None:
    """The attributes of a judgment's ``gen_ai.evaluation.result`` event; None when unscored.

    ``message_id`` is the judged response's (None for a whole turn). The label is
    ``correct`` when every valid vote said so, ``incorrect`` when none did, else ``split``.
    """
    score = judgment.score
    if score is None:
        return None
    label = judgment.verdict
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": EVALUATION_NAME,
        "gen_ai.evaluation.score.value": float(score),
        "gen_ai.evaluation.score.label": label,
        "tsq.evaluation.model": judgment.model,
        "tsq.evaluation.spec_name": judgment.spec_name,
        "tsq.evaluation.votes.valid": judgment.n_valid,
        "tsq.evaluation.votes.requested": judgment.n_requested,
        "tsq.evaluation.condition": judgment.condition,
    }
    if judgment.judge_id is not None:
        attributes["tsq.evaluation.judge_id"] = judgment.judge_id
    reasoning = _majority_reasoning(judgment.votes)
    if reasoning is not None:
        attributes["gen_ai.evaluation.explanation"] = reasoning
    if message_id is not None:
        attributes["gen_ai.response.id"] = message_id
    return attributes


@dataclass(frozen=True)
class _Run:
    """Where one agent run's spans go: its ``invoke_agent`` span and its path in the turn."""

    agent: trace.Span
    path: str
    parent_call: ToolCall | None
    clock: _Clock


class SpanBuilder:
    """Builds the spans of many sessions with one tracer provider.

    ``execute_tool`` spans are children of their run's ``invoke_agent`` span, siblings of
    the chat span that chose them, as Pydantic AI and the OTel GenAI agent conventions emit
    them: a tool runs after the model call that chose it has returned, so it is not part of
    that call. The chat span that chose a call names it in a ``tool_call`` part with the same
    ``gen_ai.tool.call.id``.

    Judgments go on the spans they judged as ``gen_ai.evaluation.result`` events: a step's on
    its chat span, a whole turn's on the turn's root span. Only ``full``-condition judgments
    are attached (the other conditions judge an ablated input, not the trace), and only
    scored ones (an unscored judgment has no value to report); of several for one step, the
    last one given wins. Judgments are matched by (session id, turn index, step index,
    parent call id).
    """

    def __init__(
        self,
        live: ToolCatalog | None = None,
        options: RenderOptions | None = None,
        judgments: Iterable[Judgment] = (),
    ):
        self.live = live
        self.options = options
        self.judgments = {
            (j.session_id, j.turn_index, j.step_index, j.parent_call_id): j
            for j in judgments
            if j.condition == "full"
        }
        self.ids = _DerivedIds()
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(
            id_generator=self.ids,
            resource=Resource({"service.name": WORKBENCH_SCOPE}),
            span_limits=_NO_LIMIT,
        )
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.agent_tracer = provider.get_tracer(WORKBENCH_SCOPE)
        self.chat_tracer = provider.get_tracer(PYDANTIC_AI_SCOPE)

    def add_session(self, session: Session) -> None:
        for turn in session.turns:
            self._add_turn(session, turn)

    def _start(
        self, tracer: trace.Tracer, name: str, parent: trace.Span | None, position: str, **kw: Any
    ) -> trace.Span:
        self.ids.span_id = span_id_for(self._session.session_id, self._turn.index, position)
        context = trace.set_span_in_context(parent) if parent is not None else None
        return tracer.start_span(name, context=context, **kw)

    def _evaluate(self, span: trace.Span, key: StepKey, message_id: str | None, at: int) -> None:
        judgment = self.judgments.get(key)
        attributes = evaluation_attributes(judgment, message_id) if judgment else None
        if attributes is not None:
            span.add_event(EVALUATION_EVENT, attributes, at)

    def _add_turn(self, session: Session, turn: Turn) -> None:
        self._session, self._turn = session, turn
        self.ids.trace_id = trace_id_for(session.session_id, turn.index)
        start = _nanos(turn.timestamp, turn.index * 1_000_000_000)
        agent = AGENT_NAME.get(session.format, "agent")
        root = self._start(
            self.agent_tracer,
            f"invoke_agent {agent}",
            None,
            "agent",
            start_time=start,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "gen_ai.conversation.id": session.session_id,
                "gen_ai.input.messages": _json([_ask_message(turn)]),
                "tsq.turn.index": turn.index,
                "tsq.session.source": session.source,
                "tsq.session.format": session.format,
            },
        )
        for event in turn.events:
            attributes = {"tsq.turn.event.kind": event.kind, "tsq.turn.event.text": event.text}
            root.add_event(TURN_EVENT, attributes, _nanos(event.timestamp, start))
        end = self._add_run(_Run(root, "agent", None, _Clock(start)), turn.messages)
        self._evaluate(root, (session.session_id, turn.index, None, None), None, end)
        root.end(end_time=end)

    def _add_run(self, run: _Run, messages: list[AssistantMessage]) -> int:
        """The spans of one run's responses and their calls; returns when the run ended."""
        end = run.clock.now + 1
        parent_call_id = run.parent_call.id if run.parent_call is not None else None
        for index, message in enumerate(messages):
            at = run.clock.at(message.timestamp)
            rendered = render_step(
                self._session, self._turn, index, "full", self.live, self.options, parent_call_id
            )
            attributes = chat_attributes(self._session, self._turn, rendered)
            chat = self._start(
                self.chat_tracer,
                attributes["logfire.msg"],
                run.agent,
                f"{run.path}/{index}",
                kind=trace.SpanKind.CLIENT,
                start_time=at,
                attributes=attributes,
            )
            key = (self._session.session_id, self._turn.index, index, parent_call_id)
            self._evaluate(chat, key, message.id, at + 1)
            chat.end(end_time=at + 1)
            end = max(end, at + 1)
            for position, call in enumerate(message.tool_calls):
                end = max(end, self._add_call(run, call, f"{run.path}/{index}/{position}"))
        return end

    def _add_call(self, run: _Run, call: ToolCall, path: str) -> int:
        at = run.clock.at(call.timestamp)
        span = self._start(
            self.agent_tracer,
            f"execute_tool {call.name}",
            run.agent,
            path,
            start_time=at,
            attributes=_tool_attributes(self._session, call),
        )
        if call.result is not None and call.result.is_error:
            span.set_status(trace.Status(trace.StatusCode.ERROR))
        end = at + 1
        if call.subagent is not None:
            attributes = _subagent_attributes(self._session, call, call.subagent)
            agent = self._start(
                self.agent_tracer,
                f"invoke_agent {attributes['gen_ai.agent.name']}",
                span,
                f"{path}/agent",
                start_time=at,
                attributes=attributes,
            )
            subrun = _Run(agent, f"{path}/agent", call, _Clock(at))
            end = max(end, self._add_run(subrun, call.subagent.messages))
            agent.end(end_time=end)
        span.end(end_time=end)
        return end

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()


def export_request(
    sessions: Iterable[Session],
    live: ToolCatalog | None = None,
    options: RenderOptions | None = None,
    judgments: Iterable[Judgment] = (),
) -> ExportTraceServiceRequest:
    """The OTLP request (protobuf message) for ``sessions``, with ``judgments`` attached."""
    builder = SpanBuilder(live, options, judgments)
    for session in sessions:
        builder.add_session(session)
    return encode_spans(builder.spans())


@dataclass(frozen=True)
class ExportCounts:
    traces: int
    spans: int
    steps: int
    """Chat spans: one per model response, subagents' included."""
    evaluations: int


def export_counts(document: dict[str, Any]) -> ExportCounts:
    """What an OTLP/JSON export holds."""
    spans = [
        span
        for resource in document.get("resourceSpans", [])
        for scope in resource.get("scopeSpans", [])
        for span in scope.get("spans", [])
    ]
    operations = [
        a["value"].get("stringValue")
        for span in spans
        for a in span.get("attributes", [])
        if a["key"] == "gen_ai.operation.name"
    ]
    return ExportCounts(
        traces=len({span["traceId"] for span in spans}),
        spans=len(spans),
        steps=operations.count("chat"),
        evaluations=sum(
            event.get("name") == EVALUATION_EVENT
            for span in spans
            for event in span.get("events", [])
        ),
    )


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
    judgments: Iterable[Judgment] = (),
) -> dict[str, Any]:
    return request_to_otlp_json(export_request(sessions, live, options, judgments))
